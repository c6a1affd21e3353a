package panto_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	panto "github.com/panto-dev/panto/bindings-go"
)

const body = `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","model":"claude-x","usage":{"input_tokens":12,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", world"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}

event: message_stop
data: {"type":"message_stop"}

`

// A Decoder is sans-I/O: feed it bytes from anywhere, pull events.
func ExampleDecoder() {
	dec, err := panto.NewDecoder(panto.WireAnthropicMessages)
	if err != nil {
		log.Fatal(err)
	}
	defer dec.Close()

	// Bytes arrive in arbitrary pieces.
	for _, chunk := range []string{body[:100], body[100:333], body[333:]} {
		if err := dec.Feed([]byte(chunk)); err != nil {
			break // Next reports the error
		}
		for {
			ev, err := dec.Next()
			if err == panto.ErrNeedMore || err == io.EOF {
				break
			}
			if err != nil {
				log.Fatal(err)
			}
			switch ev := ev.(type) {
			case panto.ContentDelta:
				fmt.Printf("delta %q\n", ev.Text)
			case panto.MessageComplete:
				fmt.Println("stop:", ev.StopReason, "output tokens:", ev.Usage.OutputTokens)
			}
		}
	}
	if err := dec.Finish(); err != nil { // end of input
		log.Fatal(err)
	}
	// Output:
	// delta "Hello"
	// delta ", world"
	// stop: stop output tokens: 4
}

// Range over a Stream's events, then check Err: the bufio.Scanner pattern.
func ExampleStream_Iter() {
	s, err := panto.NewStream(strings.NewReader(body), panto.WireAnthropicMessages)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for ev := range s.Iter() {
		fmt.Println(ev.Type())
	}
	if err := s.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// message_start
	// block_start
	// content_delta
	// content_delta
	// block_complete
	// message_complete
}

// Chan delivers events on a channel; cancelling ctx stops the stream.
func ExampleStream_Chan() {
	s, _ := panto.NewStream(strings.NewReader(body), panto.WireAnthropicMessages)
	var acc panto.Accumulator
	for ev := range s.Chan(context.Background()) {
		acc.Add(ev)
	}
	if err := s.Err(); err != nil {
		log.Fatal(err)
	}
	m := acc.Message()
	fmt.Println(m.Text(), m.StopReason, m.Usage.InputTokens)
	// Output: Hello, world stop 12
}

// A Stream cut short reports a *TruncatedError.
func ExampleTruncatedError() {
	s, _ := panto.NewStream(strings.NewReader(body[:400]), panto.WireAnthropicMessages)
	for range s.Iter() {
	}
	var te *panto.TruncatedError
	fmt.Println(errors.As(s.Err(), &te))
	// Output: true
}

// A Client streams one provider turn.  Here it talks to a local test
// server; by default it uses https://api.anthropic.com and
// $ANTHROPIC_API_KEY (https://api.openai.com/v1 and $OPENAI_API_KEY for
// WireOpenAIChat).
func ExampleClient() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	defer srv.Close()

	c, err := panto.NewClient(panto.WireAnthropicMessages,
		panto.WithBaseURL(srv.URL), panto.WithAPIKey("sk-example"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	s, err := c.Stream(ctx, &panto.Request{
		Model:    "claude-sonnet-4-5",
		System:   "Be brief.",
		Messages: []panto.Message{panto.UserMessage("Say hello")},
		Tools: []panto.Tool{{
			Name:        "read",
			Description: "Read a file",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
		}},
	})
	if err != nil {
		log.Fatal(err) // a *panto.ProviderError for HTTP errors, after retries
	}
	defer s.Close()
	for ev := range s.Iter() {
		if d, ok := ev.(panto.ContentDelta); ok {
			fmt.Print(d.Text)
		}
	}
	fmt.Println()
	if err := s.Err(); err != nil {
		log.Fatal(err)
	}
	// Output: Hello, world
}

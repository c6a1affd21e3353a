package panto

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testKey = "sk-test-0123456789abcdefSECRET"

// fastRetry keeps the tests quick; Retry-After from the server still wins.
var fastRetry = RetryPolicy{MaxRetries: 3, BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond}

type recorded struct {
	method, path string
	header       http.Header
	body         map[string]any
}

// server is an httptest server running one handler per request, in order;
// it records the requests.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	reqs     []recorded
	handlers []http.HandlerFunc
	times    []time.Time
}

func newServer(t *testing.T, handlers ...http.HandlerFunc) *server {
	s := &server{handlers: handlers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, b)
		}
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, recorded{r.Method, r.URL.Path, r.Header.Clone(), body})
		s.times = append(s.times, time.Now())
		s.mu.Unlock()
		if n >= len(s.handlers) {
			t.Errorf("unexpected request %d", n+1)
			http.Error(w, "no more", 500)
			return
		}
		s.handlers[n](w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requestTimes() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times...)
}

func (s *server) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// sse answers with the given SSE body, flushed in pieces.
func sse(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, part := range strings.SplitAfter(body, "\n\n") {
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
		}
	}
}

func status(code int, headers map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func oaChunkLine(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + f + `}],"usage":null}` + "\n\n"
}

var oaTextBody = oaChunkLine(`{"role":"assistant","content":"","refusal":null}`, "") +
	oaChunkLine(`{"content":"Hello"}`, "") +
	oaChunkLine(`{"content":", world"}`, "") +
	oaChunkLine(`{}`, "stop") +
	`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":0}}}` + "\n\n" +
	"data: [DONE]\n\n"

var oaToolBody = oaChunkLine(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}`, "") +
	oaChunkLine(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`, "") +
	oaChunkLine(`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`, "") +
	oaChunkLine(`{}`, "tool_calls") +
	"data: [DONE]\n\n"

func anEv(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

var anMessageStart = anEv("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`) +
	anEv("ping", `{"type": "ping"}`)

var anTextBody = anMessageStart +
	anEv("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
	anEv("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`) +
	anEv("content_block_stop", `{"type":"content_block_stop","index":0}`) +
	anEv("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":20,"output_tokens":5}}`) +
	anEv("message_stop", `{"type":"message_stop"}`)

var anToolBody = anMessageStart +
	anEv("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}`) +
	anEv("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}`) +
	anEv("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a"}}`) +
	anEv("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":".go\"}"}}`) +
	anEv("content_block_stop", `{"type":"content_block_stop","index":0}`) +
	anEv("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}`) +
	anEv("message_stop", `{"type":"message_stop"}`)

var anOverloaded = anMessageStart +
	anEv("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)

func jsonEqual(t *testing.T, got map[string]any, want string) {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON: %v", err)
	}
	if !reflect.DeepEqual(got, w) {
		gj, _ := json.MarshalIndent(got, "", "  ")
		wj, _ := json.MarshalIndent(w, "", "  ")
		t.Fatalf("request body\n got %s\nwant %s", gj, wj)
	}
}

func TestClientOpenAIText(t *testing.T) {
	srv := newServer(t, sse(oaTextBody))
	c, err := NewClient(WireOpenAIChat, WithBaseURL(srv.URL+"/v1"), WithAPIKey(testKey), WithRetry(fastRetry))
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Stream(context.Background(), &Request{
		Model:    "gpt-4.1",
		System:   "Be brief.",
		Messages: []Message{UserMessage("Say hello")},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, err := s.Message()
	if err != nil {
		t.Fatal(err)
	}
	if m.Text() != "Hello, world" || m.StopReason != StopStop || m.Model != "gpt-4.1" {
		t.Fatalf("message %+v", m)
	}
	if u := *m.Usage; u.InputTokens != 10 || u.CacheReadTokens != 2 || u.OutputTokens != 3 {
		t.Fatalf("usage %+v", u)
	}
	r := srv.requests()[0]
	if r.method != "POST" || r.path != "/v1/chat/completions" {
		t.Fatalf("%s %s", r.method, r.path)
	}
	if r.header.Get("Authorization") != "Bearer "+testKey || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", r.header)
	}
	jsonEqual(t, r.body, `{
		"model": "gpt-4.1",
		"messages": [
			{"role": "system", "content": "Be brief."},
			{"role": "user", "content": "Say hello"}
		],
		"stream": true,
		"stream_options": {"include_usage": true},
		"max_tokens": 8192
	}`)
}

func TestClientOpenAIToolCalls(t *testing.T) {
	srv := newServer(t, sse(oaToolBody))
	c, _ := NewClient(WireOpenAIChat, WithBaseURL(srv.URL+"/v1"), WithAPIKey(testKey), WithMaxTokensField("max_completion_tokens"))
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}
	s, err := c.Stream(context.Background(), &Request{
		Model: "gpt-4.1",
		Messages: []Message{
			{Role: RoleSystem, Content: []Block{Text{Text: "You are terse."}}},
			UserMessage("Weather in Paris and Rome?"),
			{Role: RoleAssistant, Content: []Block{
				Thinking{Text: "hidden", Signature: "sig"},
				Text{Text: "Checking."},
				ToolUse{ID: "call_0", Name: "get_weather", Input: map[string]any{"city": "Rome"}},
			}},
			{Role: RoleTool, Content: []Block{
				ToolResultBlock{ToolUseID: "call_0", Content: "18C <sunny>"},
			}},
			{Role: RoleTool, Content: []Block{
				ToolResultBlock{ToolUseID: "call_x", Content: "boom", IsError: true},
			}},
		},
		Tools:     []Tool{{Name: "get_weather", Description: "Weather for a city", InputSchema: schema}},
		MaxTokens: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Message()
	if err != nil {
		t.Fatal(err)
	}
	calls := m.ToolUses()
	if len(calls) != 1 || calls[0].ID != "call_1" || calls[0].Name != "get_weather" || calls[0].Input["city"] != "Paris" {
		t.Fatalf("tool calls %+v", calls)
	}
	if m.StopReason != StopToolUse {
		t.Fatalf("stop %q", m.StopReason)
	}
	jsonEqual(t, srv.requests()[0].body, `{
		"model": "gpt-4.1",
		"messages": [
			{"role": "system", "content": "You are terse."},
			{"role": "user", "content": "Weather in Paris and Rome?"},
			{"role": "assistant", "content": "Checking.", "tool_calls": [
				{"id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Rome\"}"}}
			]},
			{"role": "tool", "tool_call_id": "call_0", "content": "18C <sunny>"},
			{"role": "tool", "tool_call_id": "call_x", "content": "Error: boom"}
		],
		"tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
			"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
		"stream": true,
		"stream_options": {"include_usage": true},
		"max_completion_tokens": 100
	}`)
}

func TestClientAnthropicToolUse(t *testing.T) {
	srv := newServer(t, sse(anToolBody))
	c, _ := NewClient(WireAnthropicMessages, WithBaseURL(srv.URL), WithAPIKey(testKey), WithHeader("anthropic-beta", "x"))
	s, err := c.Stream(context.Background(), &Request{
		Model:  "claude-x",
		System: "Be careful.",
		Messages: []Message{
			UserMessage("Read a.go"),
			{Role: RoleAssistant, Content: []Block{
				Thinking{Text: "plan", Signature: "sig1"},
				Thinking{Text: "unsigned, dropped"},
				RedactedThinking{Data: "enc"},
				Text{Text: ""},
				ToolUse{ID: "toolu_0", Name: "read", Input: map[string]any{"path": "b.go"}},
			}},
			{Role: RoleTool, Content: []Block{ToolResultBlock{ToolUseID: "toolu_0", Content: "package b"}}},
			UserMessage("now a.go"),
		},
		Tools: []Tool{{Name: "read", Description: "Read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
		Extra: map[string]any{"temperature": 0.5},
	})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	var acc Accumulator
	for ev := range s.Iter() {
		types = append(types, ev.Type().String())
		acc.Add(ev)
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	if got := strings.Join(types, " "); got != "message_start block_start tool_details content_delta content_delta block_complete message_complete" {
		t.Fatalf("events %s", got)
	}
	m := acc.Message()
	if tu := m.ToolUses(); len(tu) != 1 || tu[0].ID != "toolu_1" || tu[0].Input["path"] != "a.go" {
		t.Fatalf("tool uses %+v", tu)
	}
	if m.StopReason != StopToolUse || m.Usage.InputTokens != 20 || m.Usage.OutputTokens != 9 {
		t.Fatalf("message %+v usage %+v", m, m.Usage)
	}
	r := srv.requests()[0]
	if r.path != "/v1/messages" || r.header.Get("x-api-key") != testKey || r.header.Get("anthropic-version") != "2023-06-01" ||
		r.header.Get("anthropic-beta") != "x" || r.header.Get("Authorization") != "" {
		t.Fatalf("%s %v", r.path, r.header)
	}
	jsonEqual(t, r.body, `{
		"model": "claude-x",
		"system": "Be careful.",
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "Read a.go"}]},
			{"role": "assistant", "content": [
				{"type": "thinking", "thinking": "plan", "signature": "sig1"},
				{"type": "redacted_thinking", "data": "enc"},
				{"type": "tool_use", "id": "toolu_0", "name": "read", "input": {"path": "b.go"}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_0", "content": "package b", "is_error": false},
				{"type": "text", "text": "now a.go"}
			]}
		],
		"tools": [{"name": "read", "description": "Read a file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}],
		"max_tokens": 8192,
		"stream": true,
		"temperature": 0.5
	}`)
}

func TestClient429RetryAfter(t *testing.T) {
	srv := newServer(t,
		status(429, map[string]string{"Retry-After": "1"}, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`),
		sse(anTextBody))
	var retries []RetryEvent
	c, _ := NewClient(WireAnthropicMessages, WithBaseURL(srv.URL), WithAPIKey(testKey), WithRetry(fastRetry),
		WithOnRetry(func(e RetryEvent) { retries = append(retries, e) }))
	s, err := c.Stream(context.Background(), &Request{Model: "claude-x", Messages: []Message{UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Message()
	if err != nil || m.Text() != "Hi" {
		t.Fatalf("%v %+v", err, m)
	}
	times := srv.requestTimes()
	if len(times) != 2 {
		t.Fatalf("%d requests", len(times))
	}
	if gap := times[1].Sub(times[0]); gap < time.Second {
		t.Fatalf("retried after %v, Retry-After said 1s", gap)
	}
	if len(retries) != 1 || retries[0].Status != 429 || retries[0].Delay != time.Second || !strings.Contains(retries[0].Reason, "rate_limit_error") {
		t.Fatalf("retries %+v", retries)
	}

	// retry-after-ms (OpenAI) and a 529.
	srv = newServer(t,
		status(529, map[string]string{"retry-after-ms": "150"}, `{"error":{"type":"overloaded_error","message":"busy"}}`),
		sse(oaTextBody))
	c, _ = NewClient(WireOpenAIChat, WithBaseURL(srv.URL), WithAPIKey(testKey), WithRetry(fastRetry))
	s, err = c.Stream(context.Background(), &Request{Model: "m", Messages: []Message{UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if times := srv.requestTimes(); len(times) != 2 {
		t.Fatalf("%d requests", len(times))
	} else if gap := times[1].Sub(times[0]); gap < 150*time.Millisecond {
		t.Fatalf("retried after %v, retry-after-ms said 150ms", gap)
	}
}

func TestClientRetriesExhaustedAndNonRetryable(t *testing.T) {
	body := `{"error":{"message":"bad key ` + testKey + `","type":"invalid_request_error"}}`
	srv := newServer(t, status(401, nil, body))
	c, _ := NewClient(WireOpenAIChat, WithBaseURL(srv.URL), WithAPIKey(testKey), WithRetry(fastRetry))
	_, err := c.Stream(context.Background(), &Request{Model: "m", Messages: []Message{UserMessage("hi")}})
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 401 || pe.Retryable() || pe.Type != "invalid_request_error" {
		t.Fatalf("%T %v", err, err)
	}
	if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), testKey[:12]) {
		t.Fatalf("the API key leaked into the error: %v", err)
	}

	h := status(503, nil, `upstream down`)
	srv = newServer(t, h, h, h, h)
	c, _ = NewClient(WireOpenAIChat, WithBaseURL(srv.URL), WithAPIKey(testKey), WithRetry(fastRetry))
	_, err = c.Stream(context.Background(), &Request{Model: "m", Messages: []Message{UserMessage("hi")}})
	if !errors.As(err, &pe) || pe.Status != 503 || pe.Message != "upstream down" {
		t.Fatalf("%T %v", err, err)
	}
	if n := len(srv.requests()); n != 4 {
		t.Fatalf("%d requests, want 1 + 3 retries", n)
	}
}

func TestClientOverloadedInside200(t *testing.T) {
	srv := newServer(t, sse(anOverloaded), sse(anTextBody))
	var retries []RetryEvent
	c, _ := NewClient(WireAnthropicMessages, WithBaseURL(srv.URL), WithAPIKey(testKey), WithRetry(fastRetry),
		WithOnRetry(func(e RetryEvent) { retries = append(retries, e) }))
	s, err := c.Stream(context.Background(), &Request{Model: "claude-x", Messages: []Message{UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for ev := range s.Iter() {
		types = append(types, ev.Type().String())
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	if got := strings.Join(types, " "); got != "message_start block_start content_delta block_complete message_complete" {
		t.Fatalf("events %s", got)
	}
	if len(srv.requests()) != 2 || len(retries) != 1 || retries[0].Status != 200 {
		t.Fatalf("%d requests, retries %+v", len(srv.requests()), retries)
	}

	// Without retries the error is returned as a *ProviderError (status 200).
	srv = newServer(t, sse(anOverloaded))
	c, _ = NewClient(WireAnthropicMessages, WithBaseURL(srv.URL), WithAPIKey(testKey), WithRetry(RetryPolicy{MaxRetries: -1}))
	_, err = c.Stream(context.Background(), &Request{Model: "claude-x", Messages: []Message{UserMessage("hi")}})
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 200 || pe.Type != "overloaded_error" || !pe.Retryable() {
		t.Fatalf("%T %v", err, err)
	}

	// After content has streamed, an overload is the stream's error.
	mid := anMessageStart +
		anEv("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
		anEv("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`) +
		anEv("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	srv = newServer(t, sse(mid))
	c, _ = NewClient(WireAnthropicMessages, WithBaseURL(srv.URL), WithAPIKey(testKey), WithRetry(fastRetry))
	s, err = c.Stream(context.Background(), &Request{Model: "claude-x", Messages: []Message{UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Message()
	if !errors.As(err, &pe) || pe.Status != 200 || !pe.Retryable() {
		t.Fatalf("%T %v", err, err)
	}
	if m.Error == "" || len(srv.requests()) != 1 {
		t.Fatalf("message %+v", m)
	}
}

func TestClientDisconnectMidStream(t *testing.T) {
	half := oaTextBody[:len(oaTextBody)/2]
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, half)
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
	})
	c, _ := NewClient(WireOpenAIChat, WithBaseURL(srv.URL), WithAPIKey(testKey), WithRetry(fastRetry))
	s, err := c.Stream(context.Background(), &Request{Model: "m", Messages: []Message{UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range s.Iter() {
		n++
	}
	var te *TruncatedError
	if !errors.As(s.Err(), &te) {
		t.Fatalf("Err() = %T %v, want *TruncatedError", s.Err(), s.Err())
	}
	if !errors.Is(s.Err(), io.ErrUnexpectedEOF) {
		t.Logf("truncation cause: %v", te.Err)
	}
	if n == 0 {
		t.Fatal("no events before the disconnect")
	}
}

func TestClientCancelDuringStall(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stall := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, anMessageStart+anEv("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	srv := newServer(t, stall)
	c, _ := NewClient(WireAnthropicMessages, WithBaseURL(srv.URL), WithAPIKey(testKey))
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.Stream(ctx, &Request{Model: "claude-x", Messages: []Message{UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	n := 0
	for range s.Iter() {
		n++
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("cancellation took %v", d)
	}
	if !errors.Is(s.Err(), context.Canceled) || n != 2 {
		t.Fatalf("Err() = %v after %d events", s.Err(), n)
	}

	// Cancelled while waiting for response headers, and during a retry wait.
	hang := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	srv = newServer(t, hang, status(429, map[string]string{"Retry-After": "30"}, `{}`))
	c, _ = NewClient(WireAnthropicMessages, WithBaseURL(srv.URL), WithAPIKey(testKey))
	for i := 0; i < 2; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start := time.Now()
		_, err := c.Stream(ctx, &Request{Model: "claude-x", Messages: []Message{UserMessage("hi")}})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
			t.Fatalf("round %d: %v after %v", i, err, time.Since(start))
		}
	}
}

func TestClientKeysFromEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-env-openai")
	t.Setenv("ANTHROPIC_API_KEY", "sk-env-anthropic")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	var got atomic.Value
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		sse(oaTextBody)(w, r)
	}, func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("x-api-key"))
		sse(anTextBody)(w, r)
	})
	c, _ := NewClient(WireOpenAIChat, WithBaseURL(srv.URL))
	s, err := c.Stream(context.Background(), &Request{Model: "m", Messages: []Message{UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got.Load() != "Bearer sk-env-openai" {
		t.Fatalf("openai auth %v", got.Load())
	}
	c, _ = NewClient(WireAnthropicMessages, WithBaseURL(srv.URL))
	s, err = c.Stream(context.Background(), &Request{Model: "m", Messages: []Message{UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got.Load() != "sk-env-anthropic" {
		t.Fatalf("anthropic key %v", got.Load())
	}
	if c, _ := NewClient(WireOpenAIChat); c.URL() != "https://api.openai.com/v1/chat/completions" || c.maxTokensField != "max_completion_tokens" {
		t.Fatalf("default OpenAI endpoint %s %s", c.URL(), c.maxTokensField)
	}
	if c, _ := NewClient(WireAnthropicMessages); c.URL() != "https://api.anthropic.com/v1/messages" {
		t.Fatalf("default Anthropic endpoint %s", c.URL())
	}
	if _, err := NewClient(WireSSE); err == nil {
		t.Fatal("a Client over the raw SSE wire")
	}
}

func TestRetryPolicyDelay(t *testing.T) {
	p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, MaxRetryAfter: 5 * time.Second}.withDefaults()
	for attempt := 1; attempt <= 8; attempt++ {
		d := p.delay(attempt, -1)
		hi := min(100*time.Millisecond<<(attempt-1), time.Second)
		if d < hi/2 || d > hi {
			t.Fatalf("attempt %d: %v not in [%v, %v]", attempt, d, hi/2, hi)
		}
	}
	if d := p.delay(1, 2*time.Second); d != 2*time.Second {
		t.Fatalf("Retry-After not honoured: %v", d)
	}
	if d := p.delay(1, time.Hour); d != 5*time.Second {
		t.Fatalf("Retry-After not capped: %v", d)
	}
	h := http.Header{}
	h.Set("Retry-After", time.Now().Add(3*time.Second).UTC().Format(http.TimeFormat))
	if d := retryAfter(h); d < time.Second || d > 3*time.Second {
		t.Fatalf("HTTP-date Retry-After: %v", d)
	}
}

// A two-round tool loop on the Responses wire against a loopback server:
// the second request carries the reasoning item exactly as it was received
// (its encrypted_content included), before the function_call it led to, and
// the call's output after them.
func TestClientResponsesReasoningRoundTrip(t *testing.T) {
	round1, err := os.ReadFile(filepath.Join("..", "tests", "fixtures", "openai_responses_reasoning_tool.sse"))
	if err != nil {
		t.Fatal(err)
	}
	round2, err := os.ReadFile(filepath.Join("..", "tests", "fixtures", "openai_responses_text.sse"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies []string
	var paths, auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, string(b))
		paths = append(paths, r.URL.Path)
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 0 {
			w.Write(round1)
		} else {
			w.Write(round2)
		}
	}))
	defer srv.Close()
	c, err := NewClient(WireOpenAIResponses, WithBaseURL(srv.URL+"/v1"), WithAPIKey(testKey))
	if err != nil {
		t.Fatal(err)
	}
	tools := []Tool{{Name: "get_weather", Description: "The forecast"}}
	msgs := []Message{UserMessage("Weather in Paris?")}
	s, err := c.Stream(context.Background(), &Request{Model: "gpt-5", System: "Be brief.", Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Message()
	if err != nil {
		t.Fatal(err)
	}
	calls := first.ToolUses()
	if len(calls) != 1 || len(first.Content) < 2 {
		t.Fatalf("round 1: %+v", first.Content)
	}
	th, ok := first.Content[0].(Thinking)
	if !ok || !strings.Contains(th.Signature, `"encrypted_content"`) {
		t.Fatalf("round 1: the first block is %#v, want the reasoning item", first.Content[0])
	}
	msgs = append(msgs, *first, Message{Role: RoleTool, Content: []Block{
		ToolResultBlock{ToolUseID: calls[0].ID, Content: "18C, sunny"}}})
	s, err = c.Stream(context.Background(), &Request{Model: "gpt-5", System: "Be brief.", Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Message(); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 2 || paths[1] != "/v1/responses" || auths[1] != "Bearer "+testKey {
		t.Fatalf("requests %v %v", paths, len(bodies))
	}
	body := bodies[1]
	if !strings.Contains(body, th.Signature) { // byte for byte
		t.Fatalf("the reasoning item is not in the request as received: %s", body)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, it := range doc["input"].([]any) {
		m := it.(map[string]any)
		kind, _ := m["type"].(string)
		if kind == "" {
			kind, _ = m["role"].(string)
		}
		if id, ok := m["call_id"].(string); ok && id != calls[0].ID {
			t.Fatalf("call id %s, want %s", id, calls[0].ID)
		}
		order = append(order, kind)
	}
	if got := strings.Join(order, " "); got != "user reasoning function_call function_call_output" {
		t.Fatalf("input items %s", got)
	}
	if doc["instructions"] != "Be brief." || doc["store"] != false || doc["max_output_tokens"] != float64(DefaultMaxTokens) {
		t.Fatalf("body %v", doc)
	}
	if strings.Contains(body, testKey) {
		t.Fatal("the key is in the body")
	}
}

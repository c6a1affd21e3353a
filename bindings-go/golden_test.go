package panto

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// goldenCase is one tests/golden/requests fixture, shared with the Python
// suite: a conversation in panto's message form in, each wire's request body
// out (written by hand from the wire semantics).
type goldenCase struct {
	Model          string            `json:"model"`
	MaxTokens      int               `json:"max_tokens"`
	MaxTokensField map[string]string `json:"max_tokens_field"`
	Tools          []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Schema      any    `json:"schema"`
	} `json:"tools"`
	Messages []Message                 `json:"messages"`
	Bodies   map[string]map[string]any `json:"bodies"`
}

func TestRequestBodiesMatchGoldenFixtures(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "tests", "golden", "requests", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 3 {
		t.Fatalf("found %d golden request fixtures under tests/golden/requests, want >= 3", len(paths))
	}
	wires := map[string]Wire{"anthropic-messages": WireAnthropicMessages, "openai-chat": WireOpenAIChat,
		"openai-responses": WireOpenAIResponses}
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var c goldenCase
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for name, wire := range wires {
			if _, ok := c.Bodies[name]; !ok {
				continue // a case about another wire
			}
			t.Run(filepath.Base(path)+"/"+name, func(t *testing.T) {
				opts := []ClientOption{WithBaseURL("http://127.0.0.1:9"), WithAPIKey("sk-golden")}
				if field := c.MaxTokensField[name]; field != "" {
					opts = append(opts, WithMaxTokensField(field))
				}
				client, err := NewClient(wire, opts...)
				if err != nil {
					t.Fatal(err)
				}
				req := &Request{Model: c.Model, Messages: c.Messages, MaxTokens: c.MaxTokens}
				for _, tool := range c.Tools {
					req.Tools = append(req.Tools, Tool{Name: tool.Name, Description: tool.Description, InputSchema: tool.Schema})
				}
				body, err := client.Body(req)
				if err != nil {
					t.Fatal(err)
				}
				var got map[string]any
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatal(err)
				}
				if want := c.Bodies[name]; !reflect.DeepEqual(got, want) {
					gotJSON, _ := json.MarshalIndent(got, "", " ")
					wantJSON, _ := json.MarshalIndent(want, "", " ")
					t.Errorf("body differs from the golden fixture\n got: %s\nwant: %s", gotJSON, wantJSON)
				}
			})
		}
	}
}

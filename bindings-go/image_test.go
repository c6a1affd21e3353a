package panto

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The image marker is the Python package's images.image_marker, byte for
// byte (the expected strings are what Python prints for the same inputs).
func TestImageMarker(t *testing.T) {
	for _, c := range []struct {
		data, want string
	}{
		{"AAAA", "[image: image/png, 3 B]"},
		{"AA==", "[image: image/png, 1 B]"},
		{strings.Repeat("A", 1364), "[image: image/png, 1023 B]"},
		{strings.Repeat("A", 1368), "[image: image/png, 1 KB]"},
		{strings.Repeat("A", 16384), "[image: image/png, 12 KB]"},
		{strings.Repeat("A", 4*1024*1024), "[image: image/png, 3.0 MB]"},
	} {
		if got := ImageMarker(Image{"image/png", c.data}); got != c.want {
			t.Errorf("ImageMarker(%d chars) = %q, want %q", len(c.data), got, c.want)
		}
	}
}

// An image over the Anthropic API's 5 MiB base64 limit becomes a note (the
// API would reject the request, and every later one of the conversation).
func TestAnthropicImageOverTheLimitIsANote(t *testing.T) {
	big := Image{"image/jpeg", strings.Repeat("A", maxImageBase64+4)}
	msgs := anthropicMessages([]Message{{Role: RoleUser, Content: []Block{Text{Text: "look"}, big}}})
	content := msgs[0].(map[string]any)["content"].([]map[string]any)
	if content[1]["type"] != "text" || !strings.Contains(content[1]["text"].(string), "not sent: over the API's 5 MiB") {
		t.Fatalf("content %v", content[1])
	}
	small := Image{"image/jpeg", "AAAA"}
	msgs = anthropicMessages([]Message{{Role: RoleUser, Content: []Block{small}}})
	if got := msgs[0].(map[string]any)["content"].([]map[string]any)[0]["type"]; got != "image" {
		t.Fatalf("type %v", got)
	}
}

// Images in prompts and tool results survive the message JSON form (the
// Python package's Message.to_dict) both ways.
func TestMessageImagesRoundTrip(t *testing.T) {
	in := []Message{
		{Role: RoleUser, Content: []Block{Text{Text: "see"}, Image{"image/png", "iVBORw0KGgo="}}},
		{Role: RoleTool, Content: []Block{
			ToolResultBlock{ToolUseID: "c1", Content: "read b.png", Images: []Image{{"image/gif", "R0lGOA=="}}},
			ToolResultBlock{ToolUseID: "c2", Content: "no images"},
		}},
	}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(raw); !strings.Contains(s, `"images":[{"data":"R0lGOA==","media_type":"image/gif","type":"image"}]`) ||
		strings.Count(s, `"images"`) != 1 {
		t.Fatalf("JSON %s", s)
	}
	var out []Message
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip\n got %#v\nwant %#v", out, in)
	}
	bad := `{"role":"tool","content":[{"type":"tool_result","tool_use_id":"c1","content":"","images":[{"type":"text"}]}]}`
	var m Message
	if err := json.Unmarshal([]byte(bad), &m); err == nil || !strings.Contains(err.Error(), "not an image block") {
		t.Fatalf("err = %v", err)
	}
}

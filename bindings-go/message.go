package panto

import (
	"encoding/json"
	"fmt"
	"iter"
	"sort"
	"strings"
)

// Role is who wrote a message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // tool results
)

// A Block is one content block of a Message: Text, Image, Thinking,
// RedactedThinking, ToolUse, ToolResultBlock or Server.
type Block interface {
	// BlockType is the block's "type" in JSON: "text", "image", "thinking",
	// "redacted_thinking", "tool_use", "tool_result" or "server".
	BlockType() string
}

// Text is plain text.  Citations holds the provider's citation objects
// (Anthropic web search results, documents), sent back with the text.
type Text struct {
	Text      string
	Citations []any
}

// Image is an image in a user message or a tool result: MediaType
// ("image/png", "image/jpeg", "image/gif", "image/webp") and the bytes as
// base64 in Data (the Python package's Image.data_b64; "data" in JSON).
type Image struct {
	MediaType string
	Data      string
}

// Server is a block panto does not model (Anthropic server_tool_use,
// web_search_tool_result, mcp_tool_use, ...), kept as its complete JSON
// object: the Anthropic wire sends it back unchanged, others drop it.
type Server struct {
	RawJSON string
}

// Thinking is model reasoning; Signature must be sent back unchanged.
type Thinking struct {
	Text      string
	Signature string
}

// RedactedThinking is encrypted reasoning (Anthropic), sent back unchanged.
type RedactedThinking struct {
	Data string
}

// ToolUse is a tool call.  Input is the parsed arguments.  When the model's
// arguments were not a JSON object, Input is empty and RawInput keeps what
// was sent, so the caller can answer with an error result.
type ToolUse struct {
	ID       string
	Name     string
	Input    map[string]any
	RawInput string
}

// ToolResultBlock answers the ToolUse with ID ToolUseID; Images are those
// the tool returned (sent to the model with the text).  The names are the
// Python package's: blocks ToolUse and ToolResultBlock (the name ToolResult
// is the agent's event that reports a tool's outcome).
type ToolResultBlock struct {
	ToolUseID string
	Content   string
	IsError   bool
	Images    []Image
}

func (Text) BlockType() string             { return "text" }
func (Thinking) BlockType() string         { return "thinking" }
func (RedactedThinking) BlockType() string { return "redacted_thinking" }
func (ToolUse) BlockType() string          { return "tool_use" }
func (ToolResultBlock) BlockType() string  { return "tool_result" }
func (Server) BlockType() string           { return "server" }
func (Image) BlockType() string            { return "image" }

// NewToolUse parses a tool call's arguments the way the Python package does:
// blank arguments are {}, arguments that are not a JSON object are kept in
// RawInput.
func NewToolUse(id, name, arguments string) ToolUse {
	t := ToolUse{ID: id, Name: name, Input: map[string]any{}}
	if strings.TrimSpace(arguments) == "" {
		return t
	}
	var v any
	if err := json.Unmarshal([]byte(arguments), &v); err != nil {
		t.RawInput = arguments
		return t
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.RawInput = arguments
		return t
	}
	t.Input = m
	return t
}

// Message is one message of panto's conversation model (the Python
// panto.Message).  Assistant messages carry Usage, StopReason and Model;
// Error is set on a message cut short by a failure.
type Message struct {
	Role       Role
	Content    []Block
	Usage      *Usage
	StopReason StopReason
	Provider   string
	Model      string
	Error      string
}

// UserMessage is a user message holding one text block.
func UserMessage(text string) Message {
	return Message{Role: RoleUser, Content: []Block{Text{Text: text}}}
}

// Text returns the concatenated text blocks.
func (m *Message) Text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if t, ok := c.(Text); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// ToolUses returns the message's tool calls in order.
func (m *Message) ToolUses() []ToolUse {
	var out []ToolUse
	for _, c := range m.Content {
		if t, ok := c.(ToolUse); ok {
			out = append(out, t)
		}
	}
	return out
}

// BlockMap renders a block as the JSON object the Python package and the
// fixtures use (block_to_dict).
func BlockMap(b Block) map[string]any {
	switch b := b.(type) {
	case Text:
		if len(b.Citations) > 0 {
			return map[string]any{"type": "text", "text": b.Text, "citations": b.Citations}
		}
		return map[string]any{"type": "text", "text": b.Text}
	case Server:
		return map[string]any{"type": "server", "raw_json": b.RawJSON}
	case Thinking:
		return map[string]any{"type": "thinking", "text": b.Text, "signature": b.Signature}
	case RedactedThinking:
		return map[string]any{"type": "redacted_thinking", "data": b.Data}
	case ToolUse:
		in := b.Input
		if in == nil {
			in = map[string]any{}
		}
		d := map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": in}
		if b.RawInput != "" {
			d["raw_input"] = b.RawInput
		}
		return d
	case ToolResultBlock:
		d := map[string]any{"type": "tool_result", "tool_use_id": b.ToolUseID, "content": b.Content, "is_error": b.IsError}
		if len(b.Images) > 0 { // absent when there are none, as in Python
			images := make([]any, len(b.Images))
			for i, img := range b.Images {
				images[i] = BlockMap(img)
			}
			d["images"] = images
		}
		return d
	case Image:
		return map[string]any{"type": "image", "media_type": b.MediaType, "data": b.Data}
	}
	panic(fmt.Sprintf("panto: not a content block: %T", b))
}

// Map renders the message as the Python package's Message.to_dict.
func (m *Message) Map() map[string]any {
	content := make([]any, 0, len(m.Content))
	for _, b := range m.Content {
		content = append(content, BlockMap(b))
	}
	d := map[string]any{"role": string(m.Role), "content": content}
	if m.Usage != nil {
		d["usage"] = usageMap(*m.Usage)
	}
	if m.StopReason != "" {
		d["stop_reason"] = string(m.StopReason)
	}
	if m.Provider != "" {
		d["provider"] = m.Provider
	}
	if m.Model != "" {
		d["model"] = m.Model
	}
	if m.Error != "" {
		d["error"] = m.Error
	}
	return d
}

// MarshalJSON writes the Map form.
func (m Message) MarshalJSON() ([]byte, error) { return json.Marshal(m.Map()) }

// UnmarshalJSON reads the Map form.
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role       Role              `json:"role"`
		Content    []json.RawMessage `json:"content"`
		Usage      *Usage            `json:"usage"`
		StopReason StopReason        `json:"stop_reason"`
		Provider   string            `json:"provider"`
		Model      string            `json:"model"`
		Error      string            `json:"error"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = Message{Role: raw.Role, Usage: raw.Usage, StopReason: raw.StopReason,
		Provider: raw.Provider, Model: raw.Model, Error: raw.Error}
	for _, c := range raw.Content {
		var v struct {
			Type      string         `json:"type"`
			Text      string         `json:"text"`
			Signature string         `json:"signature"`
			Data      string         `json:"data"`
			ID        string         `json:"id"`
			Name      string         `json:"name"`
			Input     map[string]any `json:"input"`
			RawInput  string         `json:"raw_input"`
			ToolUseID string         `json:"tool_use_id"`
			Content   string         `json:"content"`
			IsError   bool           `json:"is_error"`
			Citations []any          `json:"citations"`
			RawJSON   string         `json:"raw_json"`
			MediaType string         `json:"media_type"`
			Images    []struct {
				Type      string `json:"type"`
				MediaType string `json:"media_type"`
				Data      string `json:"data"`
			} `json:"images"`
		}
		if err := json.Unmarshal(c, &v); err != nil {
			return err
		}
		switch v.Type {
		case "text":
			m.Content = append(m.Content, Text{Text: v.Text, Citations: v.Citations})
		case "server":
			m.Content = append(m.Content, Server{RawJSON: v.RawJSON})
		case "thinking":
			m.Content = append(m.Content, Thinking{v.Text, v.Signature})
		case "redacted_thinking":
			m.Content = append(m.Content, RedactedThinking{v.Data})
		case "tool_use":
			if v.Input == nil {
				v.Input = map[string]any{}
			}
			m.Content = append(m.Content, ToolUse{v.ID, v.Name, v.Input, v.RawInput})
		case "tool_result":
			r := ToolResultBlock{ToolUseID: v.ToolUseID, Content: v.Content, IsError: v.IsError}
			for _, img := range v.Images {
				if img.Type != "image" {
					return fmt.Errorf("panto: tool result %s: not an image block: type %q", v.ToolUseID, img.Type)
				}
				r.Images = append(r.Images, Image{img.MediaType, img.Data})
			}
			m.Content = append(m.Content, r)
		case "image":
			m.Content = append(m.Content, Image{v.MediaType, v.Data})
		default:
			return fmt.Errorf("panto: unknown content block type %q", v.Type)
		}
	}
	return nil
}

func usageMap(u Usage) map[string]any {
	return map[string]any{
		"input_tokens":       u.InputTokens,
		"cache_read_tokens":  u.CacheReadTokens,
		"cache_write_tokens": u.CacheWriteTokens,
		"output_tokens":      u.OutputTokens,
		"reasoning_tokens":   u.ReasoningTokens,
	}
}

// An Accumulator assembles the events of one provider stream into a
// Message: blocks in index order (the core assembles each block, so only
// BlockComplete events matter for content), the model from MessageStart,
// stop reason and usage from MessageComplete.  The zero value is ready.
type Accumulator struct {
	blocks   []indexedBlock
	usage    Usage
	stop     StopReason
	model    string
	id       string
	started  bool
	complete bool
}

type indexedBlock struct {
	index int
	block Block
}

// Add takes the next event.  Events of other kinds are ignored.
func (a *Accumulator) Add(ev Event) {
	switch e := ev.(type) {
	case MessageStart:
		a.started = true
		a.id, a.model, a.usage = e.ID, e.Model, e.Usage
	case BlockComplete:
		a.blocks = append(a.blocks, indexedBlock{e.Index, e.Block()})
	case MessageComplete:
		a.complete = true
		a.stop, a.usage = e.StopReason, e.Usage
	}
}

// Complete reports whether the terminal MessageComplete was added.
func (a *Accumulator) Complete() bool { return a.complete }

// ID is the provider's message id from MessageStart.
func (a *Accumulator) ID() string { return a.id }

// Message returns the assembled assistant message (partial when the stream
// has not completed: its StopReason is then empty).
func (a *Accumulator) Message() *Message {
	blocks := append([]indexedBlock(nil), a.blocks...)
	sort.SliceStable(blocks, func(i, j int) bool { return blocks[i].index < blocks[j].index })
	m := &Message{Role: RoleAssistant, Model: a.model, Content: make([]Block, 0, len(blocks))}
	for _, b := range blocks {
		m.Content = append(m.Content, b.block)
	}
	if a.started || a.complete {
		u := a.usage
		m.Usage = &u
	}
	if a.complete {
		m.StopReason = a.stop
	}
	return m
}

// Accumulate assembles a sequence of events, e.g. a Stream's Iter, into a
// message.  Check the stream's Err afterwards.
func Accumulate(events iter.Seq[Event]) *Message {
	var a Accumulator
	for ev := range events {
		a.Add(ev)
	}
	return a.Message()
}

// Block converts a completed block into a content block.
func (e BlockComplete) Block() Block {
	switch e.Kind {
	case BlockThinking:
		return Thinking{Text: e.Text, Signature: e.Signature}
	case BlockRedactedThinking:
		return RedactedThinking{Data: e.Text}
	case BlockToolUse:
		return NewToolUse(e.ToolID, e.ToolName, e.Text)
	case BlockServer:
		return Server{RawJSON: e.Text}
	}
	t := Text{Text: e.Text}
	if e.Citations != "" {
		_ = json.Unmarshal([]byte(e.Citations), &t.Citations) // valid JSON from the core
	}
	return t
}

// EventMap renders an event as the JSON object the fixtures and the Python
// package's event_to_dict use.  MessageComplete carries no message in Go;
// pass the assembled one (or nil) as msg to fill the "message" key.
func EventMap(ev Event, msg *Message) map[string]any {
	switch e := ev.(type) {
	case MessageStart:
		return map[string]any{"type": "message_start", "id": e.ID, "model": e.Model, "usage": usageMap(e.Usage)}
	case BlockStart:
		return map[string]any{"type": "block_start", "index": e.Index, "kind": e.Kind.String()}
	case ToolDetails:
		return map[string]any{"type": "tool_details", "index": e.Index, "id": e.ID, "name": e.Name}
	case ContentDelta:
		return map[string]any{"type": "content_delta", "index": e.Index, "kind": e.Kind.String(), "text": e.Text}
	case BlockComplete:
		return map[string]any{"type": "block_complete", "index": e.Index, "block": BlockMap(e.Block())}
	case MessageComplete:
		var m any
		if msg != nil {
			m = msg.Map()
		}
		return map[string]any{"type": "message_complete", "message": m, "stop_reason": string(e.StopReason),
			"usage": usageMap(e.Usage), "final": true, "raw_stop_reason": e.RawStopReason}
	case SSE:
		var retry any
		if e.Retry >= 0 {
			retry = e.Retry
		}
		return map[string]any{"type": "sse", "event": e.Event, "data": e.Data, "id": e.ID, "retry": retry}
	}
	panic(fmt.Sprintf("panto: unknown event %T", ev))
}

package panto

import "fmt"

// Wire says what a byte stream is.
type Wire int

const (
	// WireSSE yields the raw server-sent events (SSE events), no decoding.
	WireSSE Wire = 1
	// WireOpenAIChat decodes OpenAI chat completions streams.
	WireOpenAIChat Wire = 2
	// WireAnthropicMessages decodes Anthropic messages streams.
	WireAnthropicMessages Wire = 3
	// WireOpenAIResponses decodes OpenAI Responses API streams.
	WireOpenAIResponses Wire = 4
)

// String returns the wire's name as the Python package spells it:
// "sse", "openai-chat", "anthropic-messages" or "openai-responses".
func (w Wire) String() string {
	switch w {
	case WireSSE:
		return "sse"
	case WireOpenAIChat:
		return "openai-chat"
	case WireAnthropicMessages:
		return "anthropic-messages"
	case WireOpenAIResponses:
		return "openai-responses"
	}
	return "unknown"
}

// ParseWire is the inverse of Wire.String; it also accepts "openai" and
// "anthropic".
func ParseWire(s string) (Wire, error) {
	switch s {
	case "sse":
		return WireSSE, nil
	case "openai-chat", "openai":
		return WireOpenAIChat, nil
	case "anthropic-messages", "anthropic":
		return WireAnthropicMessages, nil
	case "openai-responses":
		return WireOpenAIResponses, nil
	}
	return 0, fmt.Errorf("panto: unknown wire %q", s)
}

// EventType tells the event types apart without a type switch.
type EventType int

const (
	TypeMessageStart    EventType = 1
	TypeBlockStart      EventType = 2
	TypeToolDetails     EventType = 3
	TypeContentDelta    EventType = 4
	TypeBlockComplete   EventType = 5
	TypeMessageComplete EventType = 6
	TypeSSE             EventType = 7
)

var eventTypeNames = [...]string{"", "message_start", "block_start", "tool_details",
	"content_delta", "block_complete", "message_complete", "sse"}

// String returns the snake_case name used in the fixtures ("content_delta").
func (k EventType) String() string {
	if k > 0 && int(k) < len(eventTypeNames) {
		return eventTypeNames[k]
	}
	return "unknown"
}

// BlockKind is the kind of a content block.
type BlockKind int

const (
	BlockText             BlockKind = 1
	BlockThinking         BlockKind = 2
	BlockRedactedThinking BlockKind = 3
	BlockToolUse          BlockKind = 4
	BlockServer           BlockKind = 5 // any other block, kept as its JSON
)

var blockKindNames = [...]string{"", "text", "thinking", "redacted_thinking", "tool_use", "server"}

// String returns "text", "thinking", "redacted_thinking", "tool_use" or "server".
func (k BlockKind) String() string {
	if k > 0 && int(k) < len(blockKindNames) {
		return blockKindNames[k]
	}
	return "unknown"
}

// StopReason is the normalized reason a message ended.
type StopReason string

const (
	StopStop    StopReason = "stop"     // natural end or stop sequence
	StopToolUse StopReason = "tool_use" // the model wants tool results
	StopLength  StopReason = "length"   // max_tokens or context window
	StopRefusal StopReason = "refusal"  // refusal / content filter
	StopPause   StopReason = "pause"    // Anthropic pause_turn
	StopError   StopReason = "error"    // reserved for hosts
	StopOther   StopReason = "other"    // anything else, or none given
)

var stopReasons = [...]StopReason{"", StopStop, StopToolUse, StopLength, StopRefusal,
	StopPause, StopError, StopOther}

func stopReason(v int) StopReason {
	if v > 0 && v < len(stopReasons) {
		return stopReasons[v]
	}
	return StopOther
}

// Usage holds token counts normalized across wires.  InputTokens excludes
// cached tokens; ReasoningTokens is part of OutputTokens.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
	OutputTokens     int `json:"output_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens"`
}

// Total is every token billed: input, cache reads and writes, output.
func (u Usage) Total() int {
	return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens
}

// Event is one decoded event: MessageStart, BlockStart, ToolDetails,
// ContentDelta, BlockComplete, MessageComplete or SSE.  Use a type switch,
// or Kind.  Every string in an event is a Go string (copied out of C).
type Event interface {
	Type() EventType
	isEvent()
}

// MessageStart opens a message.  Usage is what the wire reported so far
// (Anthropic sends input counts up front; OpenAI sends nothing here).
type MessageStart struct {
	ID    string
	Model string
	Usage Usage
}

// BlockStart opens content block Index (0, 1, 2 ... in order of first
// appearance).
type BlockStart struct {
	Index int
	Kind  BlockKind
}

// ToolDetails names the tool call of block Index; it comes right after the
// block's BlockStart.
type ToolDetails struct {
	Index int
	ID    string
	Name  string
}

// ContentDelta is a piece of block Index: text, thinking, or for tool_use a
// raw fragment of the input JSON (not valid JSON on its own).
type ContentDelta struct {
	Index int
	Kind  BlockKind
	Text  string
}

// BlockComplete is a finished block, assembled by the core: Text is the full
// text, thinking, redacted data, or tool input JSON ("{}" when none was
// sent) or, for BlockServer, the block's complete JSON object.  Signature
// is set for thinking, ToolID/ToolName for tool_use, Citations (a JSON
// array) for text that cites sources.
type BlockComplete struct {
	Index     int
	Kind      BlockKind
	Text      string
	Signature string
	ToolID    string
	ToolName  string
	Citations string
}

// MessageComplete is the terminal event of a provider stream; nothing
// follows it.
type MessageComplete struct {
	StopReason    StopReason
	RawStopReason string // the wire's own string; empty when it sent none
	Usage         Usage  // final totals for the message
}

// SSE is one raw server-sent event (WireSSE only).
type SSE struct {
	Event string // event type; "message" when none was given
	Data  string // data lines joined with "\n"
	ID    string // the last event id in force
	Retry int64  // reconnection time in ms in force, or -1
}

func (MessageStart) Type() EventType    { return TypeMessageStart }
func (BlockStart) Type() EventType      { return TypeBlockStart }
func (ToolDetails) Type() EventType     { return TypeToolDetails }
func (ContentDelta) Type() EventType    { return TypeContentDelta }
func (BlockComplete) Type() EventType   { return TypeBlockComplete }
func (MessageComplete) Type() EventType { return TypeMessageComplete }
func (SSE) Type() EventType             { return TypeSSE }

func (MessageStart) isEvent()    {}
func (BlockStart) isEvent()      {}
func (ToolDetails) isEvent()     {}
func (ContentDelta) isEvent()    {}
func (BlockComplete) isEvent()   {}
func (MessageComplete) isEvent() {}
func (SSE) isEvent()             {}

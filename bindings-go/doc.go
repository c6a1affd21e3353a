// Package panto decodes LLM provider streams with panto's C core (through
// cgo) and streams provider turns over net/http.
//
// The layers, from the bottom:
//
//   - Decoder: sans-I/O.  Feed bytes, pull events with Next (ErrNeedMore,
//     io.EOF after the terminal event), Finish at end of input, Close to
//     release (io.Closer).
//   - Stream: a Decoder over an io.Reader such as an HTTP body, with Next,
//     Iter (range-over-func; check Err afterwards, as with bufio.Scanner),
//     Chan, Message, Close and context cancellation.
//   - Client: one provider turn over net/http for WireOpenAIChat,
//     WireOpenAIResponses and WireAnthropicMessages, with request building,
//     API keys from options or the environment, and retries that honour
//     Retry-After.
//
// Events are Go structs (MessageStart, BlockStart, ToolDetails,
// ContentDelta, BlockComplete, MessageComplete, SSE); MessageComplete is
// the last event of a provider stream.  Errors are *ProviderError,
// *TruncatedError and *DecodeError.  The events, messages and errors are
// those of the Python package: both bindings run the same C code against
// the same fixtures.
package panto

package panto

import (
	"fmt"
	"time"
)

// ErrorCode is the C core's panto_error_code.
type ErrorCode int

const (
	ErrCodeNone            ErrorCode = 0
	ErrCodeBadSSE          ErrorCode = 1 // bytes that are not an event stream
	ErrCodeBadJSON         ErrorCode = 2 // an event payload is not valid JSON
	ErrCodeProtocol        ErrorCode = 3 // valid JSON that breaks the wire's rules
	ErrCodeProvider        ErrorCode = 4 // the provider sent an error object
	ErrCodeTruncated       ErrorCode = 5 // input ended before the terminal event
	ErrCodeLimit           ErrorCode = 6 // a limit option was hit
	ErrCodeInvalidArgument ErrorCode = 7 // misuse of the API
	ErrCodeNoMemory        ErrorCode = 8 // allocation failed
)

var errorCodeNames = [...]string{"none", "bad_sse", "bad_json", "protocol", "provider",
	"truncated", "limit", "invalid_argument", "no_memory"}

// String returns the core's name for the code ("bad_json"), the same string
// the Python package puts in DecodeError.code.
func (c ErrorCode) String() string {
	if c >= 0 && int(c) < len(errorCodeNames) {
		return errorCodeNames[c]
	}
	return "unknown"
}

// DecodeError means the bytes are not a valid stream of the wire: bad SSE,
// bad JSON, a protocol violation, a limit hit.  Match the kind with
// errors.Is and the sentinels below (errors.Is(err, panto.ErrBadJSON)), or
// read Code through errors.As.
type DecodeError struct {
	Code    ErrorCode
	Message string
	// Offset is the byte offset in the input of the line (SSE errors) or
	// event (JSON, protocol errors) at fault; for limits on undecoded input
	// the number of bytes fed (panto_error.offset).
	Offset int64
}

func (e *DecodeError) Error() string {
	if e.Message == "" {
		return "panto: " + e.Code.String()
	}
	return "panto: " + e.Code.String() + ": " + e.Message
}

// Is reports whether target is the sentinel of e's code (a *DecodeError
// with that Code and no Message), so that errors.Is(err, ErrBadJSON) works.
func (e *DecodeError) Is(target error) bool { return isSentinel(target, e.Code) }

// Sentinels for errors.Is, one per error code.  ErrTruncated matches a
// *TruncatedError and ErrProvider a *ProviderError; the others match a
// *DecodeError of their code.
var (
	ErrBadSSE          error = &DecodeError{Code: ErrCodeBadSSE}
	ErrBadJSON         error = &DecodeError{Code: ErrCodeBadJSON}
	ErrProtocol        error = &DecodeError{Code: ErrCodeProtocol}
	ErrProvider        error = &DecodeError{Code: ErrCodeProvider}
	ErrTruncated       error = &DecodeError{Code: ErrCodeTruncated}
	ErrLimit           error = &DecodeError{Code: ErrCodeLimit}
	ErrInvalidArgument error = &DecodeError{Code: ErrCodeInvalidArgument}
	ErrNoMemory        error = &DecodeError{Code: ErrCodeNoMemory}
)

func isSentinel(target error, code ErrorCode) bool {
	t, ok := target.(*DecodeError)
	return ok && t.Message == "" && t.Code == code
}

// TruncatedError means the input ended before the terminal event: the
// connection dropped mid-stream, or the body was cut.  Err is the read error
// that ended the input, if any (e.g. io.ErrUnexpectedEOF).
type TruncatedError struct {
	Message string
	Err     error
	Offset  int64 // the number of bytes fed (panto_error.offset)
}

func (e *TruncatedError) Error() string {
	if e.Err != nil {
		return "panto: truncated: " + e.Message + " (" + e.Err.Error() + ")"
	}
	return "panto: truncated: " + e.Message
}

func (e *TruncatedError) Unwrap() error { return e.Err }

// Is matches ErrTruncated.
func (e *TruncatedError) Is(target error) bool { return isSentinel(target, ErrCodeTruncated) }

// ProviderError is an error reported by the provider: an HTTP error status,
// or an error object inside a 200 stream (Anthropic's `event: error`, an
// OpenAI chunk with an `error` object).
type ProviderError struct {
	Status     int           // HTTP status; 200 for an error inside a stream; 0 when unknown (a bare Decoder)
	Type       string        // e.g. "overloaded_error", "rate_limit_error"
	Message    string        // the provider's message
	RetryAfter time.Duration // from Retry-After / retry-after-ms; 0 when not sent
	retryable  bool
}

// Retryable reports whether repeating the request may succeed (rate limits,
// overload, server errors).
func (e *ProviderError) Retryable() bool { return e.retryable }

// Is matches ErrProvider.
func (e *ProviderError) Is(target error) bool { return isSentinel(target, ErrCodeProvider) }

func (e *ProviderError) Error() string {
	s := "panto: provider error"
	if e.Status != 0 {
		s += fmt.Sprintf(": HTTP %d", e.Status)
	}
	if e.Type != "" {
		s += ": " + e.Type
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func newError(code ErrorCode, msg, ptype string, retryable bool, offset int64) error {
	switch code {
	case ErrCodeProvider:
		return &ProviderError{Type: ptype, Message: msg, retryable: retryable}
	case ErrCodeTruncated:
		return &TruncatedError{Message: msg, Offset: offset}
	}
	return &DecodeError{Code: code, Message: msg, Offset: offset}
}

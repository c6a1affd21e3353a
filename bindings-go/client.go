package panto

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// AnthropicVersion is the anthropic-version header the Client sends.
const AnthropicVersion = "2023-06-01"

// DefaultMaxTokens is the output limit sent when a Request sets none.
const DefaultMaxTokens = 8192

// RetryPolicy says how the Client repeats a request that failed in a
// retryable way: a connection error, HTTP 408/409/429/500/502/503/504/529,
// or a retryable provider error (overloaded_error ...) inside a 200 stream
// before any content.  The delay is the server's Retry-After (or
// retry-after-ms) when sent, capped at MaxRetryAfter; otherwise exponential
// backoff BaseDelay*2^(attempt-1), capped at MaxDelay, with jitter (50-100%).
type RetryPolicy struct {
	MaxRetries    int           // retries after the first attempt; 0 means the default (4); negative disables retries
	BaseDelay     time.Duration // default 500ms
	MaxDelay      time.Duration // default 30s
	MaxRetryAfter time.Duration // default 10min
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxRetries == 0 {
		p.MaxRetries = 4
	}
	if p.MaxRetries < 0 {
		p.MaxRetries = 0
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 10 * time.Minute
	}
	return p
}

// delay is the wait before retry number attempt (from 1).  retryAfter < 0
// means the server sent none.
func (p RetryPolicy) delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter >= 0 {
		return min(retryAfter, p.MaxRetryAfter)
	}
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	return time.Duration(float64(d) * (0.5 + rand.Float64()/2))
}

// RetryEvent describes a retry the Client is about to make (see
// WithOnRetry).
type RetryEvent struct {
	Attempt int           // the retry number, from 1
	Delay   time.Duration // how long the Client waits first
	Reason  string        // the error, without secrets
	Status  int           // HTTP status (200 for an error inside a stream), 0 for a connection error
}

// Tool declares a tool the model may call.  InputSchema is a JSON schema:
// a map, a struct, or json.RawMessage.
type Tool struct {
	Name        string
	Description string
	InputSchema any
}

// Request is one provider turn.
type Request struct {
	Model     string
	System    string    // sent before any system messages in Messages
	Messages  []Message // user, assistant (with tool calls) and tool-result messages
	Tools     []Tool
	MaxTokens int            // default DefaultMaxTokens
	Extra     map[string]any // extra top-level body fields (temperature, thinking, ...); they win over panto's
}

// A Client streams one provider turn over net/http, for WireOpenAIChat
// (POST {base}/chat/completions; the base URL includes /v1),
// WireOpenAIResponses (POST {base}/responses) or WireAnthropicMessages
// (POST {base}/v1/messages).  It is safe for concurrent use.
type Client struct {
	wire           Wire
	baseURL        string
	apiKey         string
	http           *http.Client
	header         http.Header
	retry          RetryPolicy
	maxTokensField string
	onRetry        func(RetryEvent)
	decoderOpts    []Option
}

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithBaseURL sets the API base URL.  Defaults: $OPENAI_BASE_URL or
// https://api.openai.com/v1; $ANTHROPIC_BASE_URL or https://api.anthropic.com.
func WithBaseURL(u string) ClientOption {
	return func(c *Client) { c.baseURL = strings.TrimRight(u, "/") }
}

// WithAPIKey sets the API key.  Default: $OPENAI_API_KEY or
// $ANTHROPIC_API_KEY.  The key is sent only in its header and never appears
// in an error.
func WithAPIKey(key string) ClientOption { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient sets the http.Client (default: one without a timeout, since
// streams are long; use contexts to bound them).
func WithHTTPClient(h *http.Client) ClientOption { return func(c *Client) { c.http = h } }

// WithHeader adds a request header.
func WithHeader(key, value string) ClientOption {
	return func(c *Client) { c.header.Add(key, value) }
}

// WithRetry sets the retry policy.
func WithRetry(p RetryPolicy) ClientOption { return func(c *Client) { c.retry = p } }

// WithOnRetry calls f before each retry (from the goroutine calling Stream).
func WithOnRetry(f func(RetryEvent)) ClientOption { return func(c *Client) { c.onRetry = f } }

// WithMaxTokensField sets the body key of the output limit on WireOpenAIChat:
// "max_completion_tokens" for api.openai.com (the default there),
// "max_tokens" for compatible servers (the default elsewhere).
func WithMaxTokensField(name string) ClientOption {
	return func(c *Client) { c.maxTokensField = name }
}

// WithDecoderOptions sets the decoder limits of the streams.
func WithDecoderOptions(opts ...Option) ClientOption {
	return func(c *Client) { c.decoderOpts = append(c.decoderOpts, opts...) }
}

// NewClient returns a client for wire (WireOpenAIChat, WireOpenAIResponses
// or WireAnthropicMessages).
func NewClient(wire Wire, opts ...ClientOption) (*Client, error) {
	c := &Client{wire: wire, http: &http.Client{}, header: http.Header{}}
	switch wire {
	case WireOpenAIChat, WireOpenAIResponses:
		c.baseURL = envOr("OPENAI_BASE_URL", "https://api.openai.com/v1")
		c.apiKey = os.Getenv("OPENAI_API_KEY")
	case WireAnthropicMessages:
		c.baseURL = envOr("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
		c.apiKey = os.Getenv("ANTHROPIC_API_KEY")
	default:
		return nil, fmt.Errorf("panto: a Client needs a provider wire, not %s", wire)
	}
	c.baseURL = strings.TrimRight(c.baseURL, "/")
	for _, o := range opts {
		o(c)
	}
	c.retry = c.retry.withDefaults()
	if c.maxTokensField == "" {
		c.maxTokensField = "max_tokens"
		if u, err := url.Parse(c.baseURL); err == nil && u.Hostname() == "api.openai.com" {
			c.maxTokensField = "max_completion_tokens"
		}
	}
	return c, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Wire reports the client's wire.
func (c *Client) Wire() Wire { return c.wire }

// URL is the endpoint requests go to.
func (c *Client) URL() string {
	switch c.wire {
	case WireAnthropicMessages:
		return c.baseURL + "/v1/messages"
	case WireOpenAIResponses:
		return c.baseURL + "/responses"
	}
	return c.baseURL + "/chat/completions"
}

// Stream sends req and returns the response's event stream.  Retryable
// failures before any content (see RetryPolicy) are retried; other HTTP
// errors are a *ProviderError with the status.  ctx bounds the whole turn:
// cancelling it closes the body and ends the stream with ctx.Err().  Range
// over the stream's Iter and check Err, or call Message.
func (c *Client) Stream(ctx context.Context, req *Request) (*Stream, error) {
	body, err := c.Body(req)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		s, status, retryAfter, err := c.attempt(ctx, body)
		if err == nil {
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if attempt >= c.retry.MaxRetries || !retryable(err) {
			return nil, err
		}
		d := c.retry.delay(attempt+1, retryAfter)
		if c.onRetry != nil {
			c.onRetry(RetryEvent{Attempt: attempt + 1, Delay: d, Reason: err.Error(), Status: status})
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func retryable(err error) bool {
	var pe *ProviderError
	if errors.As(err, &pe) {
		return pe.Retryable()
	}
	var ce *connError
	return errors.As(err, &ce)
}

// connError is a failure to get a response (connection refused, reset ...).
type connError struct{ err error }

func (e *connError) Error() string { return "panto: request failed: " + e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// attempt makes one request.  On failure it returns the HTTP status (0 for
// no response) and the server's Retry-After (-1 when none).
func (c *Client) attempt(ctx context.Context, body []byte) (*Stream, int, time.Duration, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL(), bytes.NewReader(body))
	if err != nil {
		return nil, 0, -1, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if c.wire == WireAnthropicMessages {
		hreq.Header.Set("anthropic-version", AnthropicVersion)
		if c.apiKey != "" {
			hreq.Header.Set("x-api-key", c.apiKey)
		}
	} else if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	for k, vs := range c.header {
		hreq.Header.Del(k)
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, 0, -1, &connError{errors.New(c.redact(err.Error()))}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		pe := c.errorFromResponse(resp.StatusCode, resp.Header, b)
		ra := retryAfter(resp.Header)
		if ra > 0 {
			pe.RetryAfter = ra
		}
		return nil, resp.StatusCode, ra, pe
	}
	s, err := NewStreamContext(ctx, resp.Body, c.wire, c.decoderOpts...)
	if err != nil {
		resp.Body.Close()
		return nil, 0, -1, err
	}
	s.status = resp.StatusCode
	// Look ahead to the first content event, so that an error the provider
	// sends before any content (overloaded_error inside a 200) is retried
	// here instead of surfacing mid-stream.
	s.mu.Lock()
	defer s.mu.Unlock()
	var ahead []Event
	for {
		ev, err := s.next()
		if err != nil {
			if err == io.EOF {
				break
			}
			var pe *ProviderError
			if errors.As(err, &pe) {
				pe.Message = c.redact(pe.Message)
			}
			return nil, resp.StatusCode, -1, err
		}
		ahead = append(ahead, ev)
		if ev.Type() != TypeMessageStart {
			break
		}
	}
	s.pending = ahead
	return s, 0, -1, nil
}

// redact removes the API key (and a long prefix of it, which some
// providers echo back) from text.
func (c *Client) redact(text string) string {
	k := c.apiKey
	if len(k) < 4 {
		return text
	}
	text = strings.ReplaceAll(text, k, "***")
	if len(k) > 12 {
		text = strings.ReplaceAll(text, k[:len(k)-4], "***")
	}
	return text
}

var retryableStatus = map[int]bool{408: true, 409: true, 429: true, 500: true, 502: true, 503: true, 504: true, 529: true}

func (c *Client) errorFromResponse(status int, h http.Header, body []byte) *ProviderError {
	var etype, msg string
	text := strings.TrimSpace(string(body))
	var data map[string]any
	if json.Unmarshal([]byte(text), &data) == nil {
		e := any(data)
		if v, ok := data["error"]; ok {
			e = v
		}
		switch e := e.(type) {
		case map[string]any:
			msg, _ = e["message"].(string)
			if t, ok := e["type"].(string); ok && t != "" {
				etype = t
			} else if t, ok := e["code"].(string); ok {
				etype = t
			}
		case string:
			msg = e
		}
		if m, ok := data["message"].(string); ok && msg == "" {
			msg = m
		}
	}
	if msg == "" {
		msg = text
		if len(msg) > 500 {
			msg = msg[:500]
		}
		if msg == "" {
			msg = http.StatusText(status)
		}
	}
	rt := retryableStatus[status] || etype == "overloaded_error" || etype == "rate_limit_error" || etype == "api_error"
	return &ProviderError{Status: status, Type: etype, Message: c.redact(msg), retryable: rt}
}

// retryAfter reads retry-after-ms or Retry-After (seconds or an HTTP date);
// -1 when absent or unparseable.
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t))
	}
	return -1
}

// Body returns the JSON request body Stream sends for req.
func (c *Client) Body(req *Request) ([]byte, error) {
	if req.Model == "" {
		return nil, errors.New("panto: Request.Model is empty")
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	body := map[string]any{"model": req.Model, "stream": true}
	system := systemText(req)
	if c.wire == WireAnthropicMessages {
		if system != "" {
			body["system"] = system
		}
		body["messages"] = anthropicMessages(req.Messages)
		if len(req.Tools) > 0 {
			tools := make([]any, 0, len(req.Tools))
			for _, t := range req.Tools {
				tools = append(tools, map[string]any{"name": t.Name, "description": t.Description, "input_schema": schema(t.InputSchema)})
			}
			body["tools"] = tools
		}
		body["max_tokens"] = maxTokens
	} else if c.wire == WireOpenAIResponses {
		// the Python package's openai_responses.py: the conversation whole
		// every turn (store false), reasoning items sent back as received
		if system != "" {
			body["instructions"] = system
		}
		input, err := responsesInput(req.Messages)
		if err != nil {
			return nil, err
		}
		body["input"] = input
		if len(req.Tools) > 0 {
			tools := make([]any, 0, len(req.Tools))
			for _, t := range req.Tools {
				tools = append(tools, map[string]any{"type": "function", "name": t.Name,
					"description": t.Description, "parameters": schema(t.InputSchema), "strict": false})
			}
			body["tools"] = tools
		}
		body["max_output_tokens"] = maxTokens
		body["store"] = false
		body["include"] = []any{"reasoning.encrypted_content"}
	} else {
		msgs, err := openaiMessages(system, req.Messages)
		if err != nil {
			return nil, err
		}
		body["messages"] = msgs
		if len(req.Tools) > 0 {
			tools := make([]any, 0, len(req.Tools))
			for _, t := range req.Tools {
				tools = append(tools, map[string]any{"type": "function", "function": map[string]any{
					"name": t.Name, "description": t.Description, "parameters": schema(t.InputSchema)}})
			}
			body["tools"] = tools
		}
		body["stream_options"] = map[string]any{"include_usage": true}
		body[c.maxTokensField] = maxTokens
	}
	for k, v := range req.Extra {
		body[k] = v
	}
	return marshal(body)
}

func schema(s any) any {
	if s == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return s
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// systemText joins Request.System and every system message's text with
// blank lines.
func systemText(req *Request) string {
	var parts []string
	if req.System != "" {
		parts = append(parts, req.System)
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role != RoleSystem {
			continue
		}
		var texts []string
		for _, b := range m.Content {
			if t, ok := b.(Text); ok {
				texts = append(texts, t.Text)
			}
		}
		if t := strings.Join(texts, "\n"); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// Tool results' images on the OpenAI wire (a tool message takes text only):
// the tool message's text ends with toolImagesNote, and one user message
// after the tool messages holds, for each such result, a text part
// toolImagesHeader naming the call and then its image_url parts.  The
// texts are the Python package's (openai_chat.TOOL_IMAGES_NOTE/HEADER).
const (
	toolImagesNote   = "[%d image(s) attached in the next message]"
	toolImagesHeader = "Image(s) from the result of tool call %s:"
)

// openaiMessages maps panto's model to chat-completions messages: system
// first; assistant text + tool_calls (thinking is not sent back); each tool
// result its own "tool" message (an error result's content is prefixed
// "Error: "), its images in a user message after the tool messages; user
// text as one string, or text and image_url parts when it has images.
func openaiMessages(system string, messages []Message) ([]any, error) {
	out := []any{}
	if system != "" {
		out = append(out, map[string]any{"role": "system", "content": system})
	}
	var resultImages []any // flushed before the next non-tool message
	flush := func() {
		if len(resultImages) > 0 {
			out = append(out, map[string]any{"role": "user", "content": resultImages})
			resultImages = nil
		}
	}
	for i := range messages {
		m := &messages[i]
		switch m.Role {
		case RoleSystem:
			continue
		case RoleAssistant:
			flush()
			text := m.Text()
			var calls []any
			for _, b := range m.Content {
				if t, ok := b.(ToolUse); ok {
					in := t.Input
					if in == nil {
						in = map[string]any{}
					}
					args, err := marshal(in)
					if err != nil {
						return nil, fmt.Errorf("panto: tool call %s input: %w", t.ID, err)
					}
					calls = append(calls, map[string]any{"id": t.ID, "type": "function",
						"function": map[string]any{"name": t.Name, "arguments": string(args)}})
				}
			}
			if text == "" && len(calls) == 0 {
				continue
			}
			msg := map[string]any{"role": "assistant", "content": nil}
			if text != "" {
				msg["content"] = text
			}
			if len(calls) > 0 {
				msg["tool_calls"] = calls
			}
			out = append(out, msg)
		default: // user, tool
			var texts []string
			var images []any
			for _, b := range m.Content {
				switch b := b.(type) {
				case ToolResultBlock:
					content := b.Content
					if b.IsError {
						content = "Error: " + content
					}
					if len(b.Images) > 0 {
						note := fmt.Sprintf(toolImagesNote, len(b.Images))
						if content != "" {
							note = content + "\n" + note
						}
						content = note
						resultImages = append(resultImages, map[string]any{"type": "text",
							"text": fmt.Sprintf(toolImagesHeader, b.ToolUseID)})
						for _, img := range b.Images {
							resultImages = append(resultImages, imageURL(img))
						}
					}
					out = append(out, map[string]any{"role": "tool", "tool_call_id": b.ToolUseID, "content": content})
				case Text:
					texts = append(texts, b.Text)
				case Image:
					images = append(images, imageURL(b))
				}
			}
			if len(texts) > 0 || len(images) > 0 {
				flush()
			}
			if len(images) > 0 { // the array form: the text, then the images
				parts := []any{}
				if len(texts) > 0 {
					parts = append(parts, map[string]any{"type": "text", "text": strings.Join(texts, "\n")})
				}
				out = append(out, map[string]any{"role": "user", "content": append(parts, images...)})
			} else if len(texts) > 0 {
				out = append(out, map[string]any{"role": "user", "content": strings.Join(texts, "\n")})
			}
		}
	}
	flush()
	return out, nil
}

// responsesInput maps panto's model to the Responses API's input items:
// assistant blocks in order, each its own item (a thinking block whose
// signature is a reasoning item -- the decoder keeps the item's JSON there --
// that item as received; other thinking is not sent; non-empty text a
// message item; a tool call a function_call; a server block of this wire
// its JSON as received); tool results as function_call_output items (an
// error result's output prefixed "Error: ", with images the array of
// input_text and input_image parts), before the user's text and images.
func responsesInput(messages []Message) ([]any, error) {
	out := []any{}
	for i := range messages {
		m := &messages[i]
		switch m.Role {
		case RoleSystem:
			continue
		case RoleAssistant:
			for _, b := range m.Content {
				switch b := b.(type) {
				case Thinking:
					if isReasoningItem(b.Signature) {
						out = append(out, json.RawMessage(b.Signature))
					}
				case Text:
					if b.Text != "" {
						out = append(out, map[string]any{"type": "message", "role": "assistant",
							"content": []any{map[string]any{"type": "output_text", "text": b.Text}}})
					}
				case ToolUse:
					in := b.Input
					if in == nil {
						in = map[string]any{}
					}
					args, err := marshal(in)
					if err != nil {
						return nil, fmt.Errorf("panto: tool call %s input: %w", b.ID, err)
					}
					out = append(out, map[string]any{"type": "function_call", "call_id": b.ID,
						"name": b.Name, "arguments": string(args)})
				case Server:
					if isResponsesItem(b.RawJSON) {
						out = append(out, json.RawMessage(b.RawJSON))
					}
				}
			}
		default: // user, tool: the results first (they answer the calls before them)
			var parts []any
			textOnly := true
			for _, b := range m.Content {
				switch b := b.(type) {
				case ToolResultBlock:
					content := b.Content
					if b.IsError {
						content = "Error: " + content
					}
					var output any = content
					if len(b.Images) > 0 {
						arr := []any{}
						if content != "" {
							arr = append(arr, map[string]any{"type": "input_text", "text": content})
						}
						for _, img := range b.Images {
							arr = append(arr, inputImage(img))
						}
						output = arr
					}
					out = append(out, map[string]any{"type": "function_call_output",
						"call_id": b.ToolUseID, "output": output})
				case Text:
					parts = append(parts, map[string]any{"type": "input_text", "text": b.Text})
				case Image:
					parts = append(parts, inputImage(b))
					textOnly = false
				}
			}
			if len(parts) == 0 {
				continue
			}
			if textOnly {
				texts := make([]string, len(parts))
				for k, p := range parts {
					texts[k] = p.(map[string]any)["text"].(string)
				}
				out = append(out, map[string]any{"role": "user", "content": strings.Join(texts, "\n")})
			} else {
				out = append(out, map[string]any{"role": "user", "content": parts})
			}
		}
	}
	return out, nil
}

func inputImage(img Image) map[string]any {
	return map[string]any{"type": "input_image", "image_url": "data:" + img.MediaType + ";base64," + img.Data}
}

// isReasoningItem: a thinking block's signature holds a Responses reasoning
// item (its JSON object) rather than another wire's signature.
func isReasoningItem(signature string) bool {
	if !strings.HasPrefix(signature, "{") {
		return false
	}
	var v struct {
		Type string `json:"type"`
	}
	return json.Unmarshal([]byte(signature), &v) == nil && v.Type == "reasoning"
}

// isResponsesItem: a server block this wire can send back (an item it
// received), not one of Anthropic's (*_tool_use, *_tool_result,
// container_upload, compaction).
func isResponsesItem(raw string) bool {
	var v struct {
		Type string `json:"type"`
	}
	if json.Unmarshal([]byte(raw), &v) != nil || v.Type == "" {
		return false
	}
	t := v.Type
	return !strings.HasSuffix(t, "_tool_use") && !strings.HasSuffix(t, "_tool_result") &&
		t != "container_upload" && t != "compaction"
}

func imageURL(img Image) map[string]any {
	return map[string]any{"type": "image_url",
		"image_url": map[string]any{"url": "data:" + img.MediaType + ";base64," + img.Data}}
}

// maxImageBase64 is the Anthropic API's limit for one image (5 MiB of
// base64); a larger one would fail this request and every later one of the
// conversation, so a note names it instead (as the Python package does).
const maxImageBase64 = 5 * 1024 * 1024

func anthropicImage(img Image) map[string]any {
	if len(img.Data) > maxImageBase64 {
		return map[string]any{"type": "text",
			"text": ImageMarker(img) + " not sent: over the API's 5 MiB (base64) limit for an image"}
	}
	return map[string]any{"type": "image", "source": map[string]any{
		"type": "base64", "media_type": img.MediaType, "data": img.Data}}
}

// ImageMarker is how an image is shown where its data must not go (a
// terminal, a log): "[image: image/png, 12 KB]", as in the Python package.
func ImageMarker(img Image) string {
	n := len(img.Data)
	size := n * 3 / 4
	if n >= 2 {
		size -= strings.Count(img.Data[n-2:], "=")
	} else {
		size -= strings.Count(img.Data, "=")
	}
	var shown string
	switch {
	case size >= 1024*1024:
		shown = fmt.Sprintf("%.1f MB", float64(size)/(1024*1024))
	case size < 1024:
		shown = fmt.Sprintf("%d B", size)
	default:
		shown = fmt.Sprintf("%.0f KB", float64(size)/1024)
	}
	return "[image: " + img.MediaType + ", " + shown + "]"
}

// anthropicMessages maps panto's model to messages-API messages: assistant
// blocks in order (signed thinking, redacted thinking, non-empty text,
// tool_use); tool results as tool_result blocks of a user message (with
// images, content is the text part and image blocks); user images as image
// blocks;
// consecutive same-role messages merged, tool results first.
func anthropicMessages(messages []Message) []any {
	type msg struct {
		role   string
		blocks []map[string]any
	}
	var out []*msg
	for i := range messages {
		m := &messages[i]
		var role string
		var blocks []map[string]any
		switch m.Role {
		case RoleSystem:
			continue
		case RoleAssistant:
			role = "assistant"
			for _, b := range m.Content {
				switch b := b.(type) {
				case Text:
					if b.Text != "" && len(b.Citations) > 0 {
						blocks = append(blocks, map[string]any{"type": "text", "text": b.Text, "citations": b.Citations})
					} else if b.Text != "" {
						blocks = append(blocks, map[string]any{"type": "text", "text": b.Text})
					}
				case Server: // server tool calls and results go back unchanged
					var v map[string]any
					if json.Unmarshal([]byte(b.RawJSON), &v) == nil {
						blocks = append(blocks, v)
					}
				case Thinking:
					if b.Signature != "" {
						blocks = append(blocks, map[string]any{"type": "thinking", "thinking": b.Text, "signature": b.Signature})
					}
				case RedactedThinking:
					blocks = append(blocks, map[string]any{"type": "redacted_thinking", "data": b.Data})
				case ToolUse:
					in := b.Input
					if in == nil {
						in = map[string]any{}
					}
					blocks = append(blocks, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": in})
				}
			}
		default:
			role = "user"
			var texts []map[string]any
			for _, b := range m.Content {
				switch b := b.(type) {
				case ToolResultBlock:
					var content any = b.Content
					if len(b.Images) > 0 { // the list form: the text (when there is any), then the images
						parts := []map[string]any{}
						if b.Content != "" {
							parts = append(parts, map[string]any{"type": "text", "text": b.Content})
						}
						for _, img := range b.Images {
							parts = append(parts, anthropicImage(img))
						}
						content = parts
					}
					blocks = append(blocks, map[string]any{"type": "tool_result", "tool_use_id": b.ToolUseID,
						"content": content, "is_error": b.IsError})
				case Text:
					texts = append(texts, map[string]any{"type": "text", "text": b.Text})
				case Image:
					texts = append(texts, anthropicImage(b))
				}
			}
			blocks = append(blocks, texts...)
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].role == role {
			prev := out[n-1]
			all := append(prev.blocks, blocks...)
			if role == "user" {
				var results, rest []map[string]any
				for _, b := range all {
					if b["type"] == "tool_result" {
						results = append(results, b)
					} else {
						rest = append(rest, b)
					}
				}
				all = append(results, rest...)
			}
			prev.blocks = all
			continue
		}
		out = append(out, &msg{role, blocks})
	}
	res := make([]any, 0, len(out))
	for _, m := range out {
		res = append(res, map[string]any{"role": m.role, "content": m.blocks})
	}
	return res
}

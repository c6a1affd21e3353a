package panto

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

const streamgen = "../bench/streamgen.py"

// genBody runs bench/streamgen.py; it skips when python3 or the script is
// missing.  Results are cached per process.
func genBody(tb testing.TB, wire string, size, seed int, expect bool) ([]byte, map[string]any) {
	tb.Helper()
	key := fmt.Sprintf("%s/%d/%d/%v", wire, size, seed, expect)
	genMu.Lock()
	defer genMu.Unlock()
	if g, ok := genCache[key]; ok {
		return g.body, g.expect
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		tb.Skip("python3 not found: cannot generate bodies")
	}
	if _, err := os.Stat(streamgen); err != nil {
		tb.Skipf("%s not found", streamgen)
	}
	args := []string{streamgen, "--wire", wire, "--bytes", fmt.Sprint(size), "--seed", fmt.Sprint(seed)}
	var expectPath string
	if expect {
		expectPath = filepath.Join(tb.TempDir(), "expect.json")
		args = append(args, "--expect", expectPath)
	}
	cmd := exec.Command(py, args...)
	cmd.Stderr = io.Discard
	body, err := cmd.Output()
	if err != nil {
		tb.Fatalf("streamgen: %v", err)
	}
	var m map[string]any
	if expect {
		b, err := os.ReadFile(expectPath)
		if err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			tb.Fatal(err)
		}
	}
	genCache[key] = genResult{body, m}
	return body, m
}

type genResult struct {
	body   []byte
	expect map[string]any
}

var (
	genMu    sync.Mutex
	genCache = map[string]genResult{}
)

// TestGeneratedBodies decodes seeded generated bodies of both wires and
// compares the assembled message with the generator's expectation.
func TestGeneratedBodies(t *testing.T) {
	for _, wire := range []string{"openai-chat", "anthropic-messages"} {
		for seed := 1; seed <= 3; seed++ {
			body, want := genBody(t, wire, 100_000, seed, true)
			w, _ := ParseWire(wire)
			s, _ := NewStream(&chunkReader{data: body}, w)
			m, err := s.Message()
			if err != nil {
				t.Fatalf("%s seed %d: %v", wire, seed, err)
			}
			if got := normalize(t, m.Map()); !reflect.DeepEqual(got, normalize(t, want)) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				t.Fatalf("%s seed %d: message differs\n got %.600s\nwant %.600s", wire, seed, gj, wj)
			}
		}
	}
}

// chunkReader returns its data in reads of 1-4 KiB, like a network body.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	r.n++
	size := 1024 + (r.n*2654435761)%3072
	if size > len(p) {
		size = len(p)
	}
	if size > len(r.data) {
		size = len(r.data)
	}
	copy(p, r.data[:size])
	r.data = r.data[size:]
	return size, nil
}

// ---- the pure-Go baseline: bufio line splitting + encoding/json structs

type oaChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role             string  `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
			Refusal          *string `json:"refusal"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails *struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

type anEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		ID    string          `json:"id"`
		Model string          `json:"model"`
		Usage json.RawMessage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
		Text string `json:"text"`
		Data string `json:"data"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

var dataPrefix = []byte("data:")

// baseline splits lines with bufio and decodes every data payload into the
// wire's structs; it returns the number of payloads decoded.
func baseline(r io.Reader, wire string) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, dataPrefix) {
			continue
		}
		data := bytes.TrimPrefix(line[len(dataPrefix):], []byte(" "))
		if wire == "openai-chat" {
			if bytes.Equal(data, []byte("[DONE]")) {
				n++
				continue
			}
			var c oaChunk
			if err := json.Unmarshal(data, &c); err != nil {
				return n, err
			}
		} else {
			var e anEvent
			if err := json.Unmarshal(data, &e); err != nil {
				return n, err
			}
		}
		n++
	}
	return n, sc.Err()
}

func countEvents(tb testing.TB, body []byte, wire Wire) int {
	s, _ := NewStream(bytes.NewReader(body), wire)
	n := 0
	for range s.Iter() {
		n++
	}
	if s.Err() != nil {
		tb.Fatal(s.Err())
	}
	return n
}

const benchBytes = 5_000_000

func benchPanto(b *testing.B, wire string) {
	body, _ := genBody(b, wire, benchBytes, 1, false)
	w, _ := ParseWire(wire)
	events := countEvents(b, body, w)
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, _ := NewStream(&chunkReader{data: body}, w)
		for range s.Iter() {
		}
		if err := s.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func benchBaseline(b *testing.B, wire string) {
	body, _ := genBody(b, wire, benchBytes, 1, false)
	w, _ := ParseWire(wire)
	events := countEvents(b, body, w)
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := baseline(&chunkReader{data: body}, wire); err != nil {
			b.Fatal(err)
		}
	}
	// The same event count: both decode the same body, so events/s compare
	// the work of producing panto's events.
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDecode compares Stream.Iter with the pure-Go baseline on 5 MB
// generated bodies:
//
//	go test -run '^$' -bench Decode -benchtime 5x
func BenchmarkDecode(b *testing.B) {
	for _, wire := range []string{"openai-chat", "anthropic-messages"} {
		b.Run(wire+"/panto-iter", func(b *testing.B) { benchPanto(b, wire) })
		b.Run(wire+"/baseline-bufio-json", func(b *testing.B) { benchBaseline(b, wire) })
	}
}

// BenchmarkRatio times both decoders on the same bodies, alternating, and
// reports how many times faster Iter is (testing.Benchmark cannot nest).
func BenchmarkRatio(b *testing.B) {
	for _, wire := range []string{"openai-chat", "anthropic-messages"} {
		b.Run(wire, func(b *testing.B) {
			body, _ := genBody(b, wire, benchBytes, 1, false)
			w, _ := ParseWire(wire)
			events := countEvents(b, body, w)
			var tp, tb time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				s, _ := NewStream(&chunkReader{data: body}, w)
				for range s.Iter() {
				}
				if err := s.Err(); err != nil {
					b.Fatal(err)
				}
				tp += time.Since(start)
				start = time.Now()
				if _, err := baseline(&chunkReader{data: body}, wire); err != nil {
					b.Fatal(err)
				}
				tb += time.Since(start)
			}
			b.ReportMetric(float64(tb)/float64(tp), "x-faster")
			b.ReportMetric(float64(events)*float64(b.N)/tp.Seconds(), "panto-events/s")
			b.ReportMetric(float64(events)*float64(b.N)/tb.Seconds(), "baseline-events/s")
		})
	}
}

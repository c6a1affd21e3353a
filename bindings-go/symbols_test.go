package panto

import (
	"strings"
	"testing"

	"github.com/panto-dev/panto/bindings-go/internal/symclash"
)

// TestLinksBesideOtherCgoCode: this test binary links the core together
// with another cgo package that defines json_parse, pt_json_parse and other
// names of the core's internals.  It builds only because the core's only
// global symbols are panto_* (a clash fails the link with "multiple
// definition of `json_parse'"); it then checks both sides call their own
// code.
func TestLinksBesideOtherCgoCode(t *testing.T) {
	if got := symclash.Sum(); got != 55 {
		t.Fatalf("symclash.Sum() = %d, want 55", got)
	}
	s, err := NewStream(strings.NewReader(
		"data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"a\\\":1}\"},\"finish_reason\":\"stop\"}]}\n\n"+
			"data: [DONE]\n\n"), WireOpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, err := s.Message()
	if err != nil {
		t.Fatal(err)
	}
	if m.Text() != `{"a":1}` {
		t.Fatalf("decoded %q", m.Text())
	}
}

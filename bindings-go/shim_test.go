//go:build pantotest

package panto

// Tests that need the test-only cgo shims of testshim.go; run them with
//
//	go test -tags pantotest ./...

import (
	"runtime"
	"testing"
)

// TestLayoutAndNames: the ABI structs' layout and the enum names, read
// from C through the pantotest shims (testshim.go).
func TestLayoutAndNames(t *testing.T) {
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
		// LP64 layout of the ABI structs, as asserted from C and Python.
		want := map[string]int{
			"sizeof(panto_event)":                       104,
			"offsetof(panto_event, u)":                  8,
			"sizeof(panto_error)":                       48,
			"sizeof(panto_stream_options)":              32,
			"offsetof(panto_block_complete, tool_name)": 64,
			"offsetof(panto_error, retryable)":          4,
		}
		got := layout()
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %d, want %d", k, got[k], v)
			}
		}
	}
	// The Go names of enum values match the core's.
	wires, kinds, blocks, stops, codes := cNames()
	for i := 1; i <= 4; i++ {
		if Wire(i).String() != wires[i] {
			t.Errorf("wire %d: Go %q, C %q", i, Wire(i), wires[i])
		}
	}
	for i := 1; i <= 7; i++ {
		if EventType(i).String() != kinds[i] {
			t.Errorf("event kind %d: Go %q, C %q", i, EventType(i), kinds[i])
		}
		if string(stopReason(i)) != stops[i] {
			t.Errorf("stop reason %d: Go %q, C %q", i, stopReason(i), stops[i])
		}
	}
	for i := 1; i <= 4; i++ {
		if BlockKind(i).String() != blocks[i] {
			t.Errorf("block kind %d: Go %q, C %q", i, BlockKind(i), blocks[i])
		}
	}
	for i := 0; i <= 8; i++ {
		if ErrorCode(i).String() != codes[i] {
			t.Errorf("error code %d: Go %q, C %q", i, ErrorCode(i), codes[i])
		}
	}
}

// TestLeak creates and finishes (or abandons) 10,000 decoders and checks
// that the C heap does not grow.  Run it under ASan too:
//
//	go test -tags pantotest -asan -run TestLeak
func TestLeak(t *testing.T) {
	fixtures := loadFixturesOrNil()
	bodies := [][]byte{[]byte(openaiText)}
	wires := []Wire{WireOpenAIChat}
	for _, f := range fixtures {
		w, _ := ParseWire(f.Wire)
		bodies = append(bodies, f.Body)
		wires = append(wires, w)
	}
	round := func(i int) {
		k := i % len(bodies)
		dec, err := NewDecoder(wires[k])
		if err != nil {
			t.Fatal(err)
		}
		switch i % 4 {
		case 0: // abandoned half way
			dec.Feed(bodies[k][:len(bodies[k])/2])
			dec.Next()
			dec.Close()
		case 1: // Close with nothing fed
			dec.Close()
		default: // drained to the end (frees itself), Close as well
			dec.Feed(bodies[k])
			dec.Finish()
			for {
				if _, err := dec.Next(); err != nil {
					break
				}
			}
			if i%4 == 3 {
				dec.Close()
			} else if dec.Memory() != 0 {
				t.Fatalf("body %d: finished decoder holds %d bytes", k, dec.Memory())
			}
		}
	}
	// One OS thread, so one malloc arena: the counts are then exact.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := 0; i < 2000; i++ { // warm up the allocator
		round(i)
	}
	runtime.GC()
	before := cHeapInUse()
	for i := 0; i < leakRounds; i++ {
		round(i)
	}
	runtime.GC()
	after := cHeapInUse()
	if before <= 0 {
		// No mallinfo2 (not glibc), or ASan's allocator (-asan), whose
		// LeakSanitizer checks for leaks at exit instead.
		t.Logf("C heap counts unavailable (%d); rely on `go test -asan`", before)
		return
	}
	t.Logf("C heap in use: %d bytes before, %d after %d decoders", before, after, leakRounds)
	if after-before > 32<<10 {
		t.Fatalf("C heap grew by %d bytes over 10,000 decoders", after-before)
	}
}

//go:build pantotest

package panto

// Test-only cgo helpers (cgo is not allowed in _test.go files): struct
// layout facts, the core's enum names and the C heap in use.  Built only
// with the pantotest tag, so they never ship in a program that imports the
// package:
//
//	go test -tags pantotest ./...

/*
#include <stddef.h>
#include "panto.h"
#include <stdlib.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
static long long pgo_heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();
	return (long long)(m.uordblks + m.hblkhd);
}
#else
static long long pgo_heap_in_use(void) { return -1; }
#endif

// Layout facts for the tests (cgo is not allowed in _test.go files).
static size_t pgo_sizeof_event(void) { return sizeof(panto_event); }
static size_t pgo_offsetof_union(void) { return offsetof(panto_event, u); }
static size_t pgo_sizeof_error(void) { return sizeof(panto_error); }
static size_t pgo_sizeof_options(void) { return sizeof(panto_stream_options); }
static size_t pgo_offsetof_block_complete_tool_name(void) { return offsetof(panto_block_complete, tool_name); }
static size_t pgo_offsetof_error_retryable(void) { return offsetof(panto_error, retryable); }
*/
import "C"

// cHeapInUse reports the bytes the C allocator has handed out and not had
// back (glibc mallinfo2), or -1 where that is not available.  For the leak
// test.
func cHeapInUse() int64 { return int64(C.pgo_heap_in_use()) }

// layout reports C struct sizes for the layout test.
func layout() map[string]int {
	return map[string]int{
		"sizeof(panto_event)":                       int(C.pgo_sizeof_event()),
		"offsetof(panto_event, u)":                  int(C.pgo_offsetof_union()),
		"sizeof(panto_error)":                       int(C.pgo_sizeof_error()),
		"sizeof(panto_stream_options)":              int(C.pgo_sizeof_options()),
		"offsetof(panto_block_complete, tool_name)": int(C.pgo_offsetof_block_complete_tool_name()),
		"offsetof(panto_error, retryable)":          int(C.pgo_offsetof_error_retryable()),
	}
}

// cNames returns the core's names for enum values, for the tests.
func cNames() (wires, kinds, blocks, stops, codes []string) {
	for i := 0; i <= 8; i++ {
		wires = append(wires, C.GoString(C.panto_wire_name(C.int(i))))
		kinds = append(kinds, C.GoString(C.panto_event_kind_name(C.int(i))))
		blocks = append(blocks, C.GoString(C.panto_block_kind_name(C.int(i))))
		stops = append(stops, C.GoString(C.panto_stop_reason_name(C.int(i))))
		codes = append(codes, C.GoString(C.panto_error_code_name(C.int(i))))
	}
	return
}

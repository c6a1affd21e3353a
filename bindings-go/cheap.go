package panto

/*
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
*/
import "C"

// cHeapInUse reports the bytes the C allocator has handed out and not had
// back (glibc mallinfo2), or -1 where that is not available.  For the leak
// test.
func cHeapInUse() int64 { return int64(C.pgo_heap_in_use()) }

// Package symclash is C code that defines global symbols named like the C
// core's internals, before (json_parse, sse_parse, pbuf_append,
// parena_alloc, utf8_valid_prefix) and after (pt_*) they were renamed.  The
// binding's tests link it beside the core (TestLinksBesideOtherCgoCode): a
// core internal that is global would make that link fail with "multiple
// definition".
package symclash

/*
int json_parse(void) { return 1; }
int json_get(void) { return 2; }
int sse_parse(void) { return 3; }
int pbuf_append(void) { return 4; }
int parena_alloc(void) { return 5; }
int utf8_valid_prefix(void) { return 6; }
int pt_json_parse(void) { return 7; }
int pt_fail(void) { return 8; }
int pt_pbuf_append(void) { return 9; }
int pt_sse_parse(void) { return 10; }

static int symclash_sum(void)
{
	return json_parse() + json_get() + sse_parse() + pbuf_append() + parena_alloc() +
	       utf8_valid_prefix() + pt_json_parse() + pt_fail() + pt_pbuf_append() + pt_sse_parse();
}
*/
import "C"

// Sum calls every function above; it returns 55.
func Sum() int { return int(C.symclash_sum()) }

/* panto_core.c -- the whole C core as one translation unit (a "unity
 * build", as tree-sitter's lib/src/lib.c).  Internal functions become
 * `static`, so the libraries built from this file export only the panto_*
 * functions declared in panto.h: a program that links panto beside other
 * code defining json_parse (or pt_fail) links cleanly.  CMake builds
 * libpanto.a and libpanto.so from this file; the white-box C tests include
 * it to reach the internals.  Keep the list below in sync with the .c files of csrc/ (a missing
 * one shows up as unresolved panto_ functions when the tests link). */
#if defined(__GNUC__)
#define PT_INTERNAL static __attribute__((unused))
#else
#define PT_INTERNAL static
#endif

#include "../util.c"
#include "../json.c"
#include "../sse.c"
#include "../stream.c"
#include "../wire_openai_chat.c"
#include "../wire_anthropic.c"
#include "../wire_openai_responses.c"

/* test_json.c -- the strict RFC 8259 reader (csrc/json.c). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"
#include "unity/panto_core.c" /* the core, internals included */
#include "testlib.h"

static int parse_str(jdoc *d, const char *s, uint32_t depth, size_t *off, const char **msg)
{
    return pt_json_parse(d, (const uint8_t *)s, strlen(s), depth, off, msg);
}

static int accepts(const char *s)
{
    jdoc d = {0};
    size_t off;
    const char *msg;
    int rc = parse_str(&d, s, 0, &off, &msg);
    pt_json_doc_free(&d);
    int v = panto_json_validate((const uint8_t *)s, strlen(s), 0, NULL, NULL);
    if ((rc == 0) != (v == PANTO_OK))
        return -1;
    return rc == 0;
}

/* --------------------------------------------------------- JSONTestSuite */

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (sz < 0) {
        fclose(f);
        return NULL;
    }
    /* exactly sz bytes, so ASan catches any read past the end */
    uint8_t *b = malloc(sz > 0 ? (size_t)sz : 1);
    if (b != NULL && sz > 0 && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)sz;
    return b;
}

static void test_suite(void)
{
    /* Vendored in the repository (tests/data, MIT): ctest runs from the
     * repository root.  Missing data is a failure, never a skip. */
    const char *dirname = "tests/data/JSONTestSuite/test_parsing";
    DIR *dir = opendir(dirname);
    if (dir == NULL) {
        printf("FAIL: JSONTestSuite conformance data missing at %s\n", dirname);
        CHECK(dir != NULL);
        return;
    }
    int ny = 0, nn = 0, ni = 0, ni_acc = 0;
    int bad = 0;
    jdoc d = {0};
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        const char *name = de->d_name;
        size_t nl = strlen(name);
        if (nl < 7 || strcmp(name + nl - 5, ".json") != 0 || name[1] != '_')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dirname, name);
        size_t n = 0;
        uint8_t *buf = read_file(path, &n);
        if (buf == NULL) {
            fprintf(stderr, "cannot read %s\n", path);
            bad++;
            continue;
        }
        size_t off = 0;
        const char *msg = NULL;
        int rc = pt_json_parse(&d, buf, n, 0, &off, &msg);
        int v = panto_json_validate(buf, n, 0, NULL, NULL);
        if ((rc == 0) != (v == PANTO_OK)) {
            fprintf(stderr, "%s: pt_json_parse and panto_json_validate disagree\n", name);
            bad++;
        }
        if (rc != 0 && (msg == NULL || off > n)) {
            fprintf(stderr, "%s: bad error report\n", name);
            bad++;
        }
        if (name[0] == 'y') {
            ny++;
            if (rc != 0) {
                fprintf(stderr, "%s: rejected (%s at %zu)\n", name, msg, off);
                bad++;
            }
        } else if (name[0] == 'n') {
            nn++;
            if (rc == 0) {
                fprintf(stderr, "%s: accepted\n", name);
                bad++;
            }
        } else if (name[0] == 'i') {
            ni++;
            ni_acc += rc == 0;
        }
        free(buf);
    }
    closedir(dir);
    pt_json_doc_free(&d);
    CHECK_EQ_INT(bad, 0);
    CHECK(ny >= 90);
    CHECK(nn >= 180);
    CHECK(ni >= 30);
    printf("  JSONTestSuite: %d y_ accepted, %d n_ rejected, %d i_ (%d accepted)\n", ny,
           nn, ni, ni_acc);
}

/* ------------------------------------------------------------- grammar */

static void test_grammar(void)
{
    static const char *yes[] = {
        "0", "-0", "1", "-1", "123", "1.5", "-1.5e10", "1E+2", "1e-2", "0.0", "0e0",
        "1.0E-0", "12345678901234567890123456789012345678901234567890",
        "true", "false", "null", "\"\"", "\"a\"", " [ ] ", "{}", "\t\r\n{ }\n",
        "[1,2,3]", "{\"a\":1,\"b\":[true,false,null],\"c\":{}}", "[[[]]]",
        "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\uFFFF\\ud83d\\ude00\"",
        "\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF\"",
        "\"\x7F\"", "[\"a\" , \"b\" ]", "{\"\":\"\"}",
    };
    static const char *no[] = {
        "", " ", "01", "-01", "+1", ".5", "1.", "1.e5", "1e", "1e+", "-", "--1", "0x10",
        "Infinity", "NaN", "tru", "nul", "True", "[1,]", "[,1]", "[1 2]", "{\"a\"}",
        "{\"a\":}", "{\"a\" 1}", "{a:1}", "{\"a\":1,}", "{,}", "[", "]", "[[]", "{\"a\":1",
        "\"abc", "\"\\\"", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\ud800\"",
        "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\ude00\\ud83d\"", "\"\\ud800\\\"",
        "\"a\tb\"", "\"a\nb\"", "\"\x01\"", "\"\xC0\x80\"", "\"\xED\xA0\x80\"",
        "\"\xF4\x90\x80\x80\"", "\"\xFF\"", "\"\xE2\x82\"", "\"\x80\"", "1 2",
        "[] []", "{} x", "\xEF\xBB\xBF{}", "'a'", "[\"a\",]", "\"\\u00e9",
        "{\"a\":1}}", "[1]]", "/* c */ 1", "1 // c",
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (accepts(yes[i]) != 1) {
            fprintf(stderr, "should accept: %s\n", yes[i]);
            ok = 0;
        }
    CHECK(ok);
    ok = 1;
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (accepts(no[i]) != 0) {
            fprintf(stderr, "should reject: %s\n", no[i]);
            ok = 0;
        }
    CHECK(ok);
    /* an embedded NUL after a value */
    jdoc d = {0};
    size_t off;
    const char *msg;
    CHECK_EQ_INT(pt_json_parse(&d, (const uint8_t *)"[1]\0", 4, 0, &off, &msg), -1);
    CHECK_EQ_INT(off, 3);
    CHECK(strcmp(msg, "trailing characters after value") == 0);
    /* NULL with zero length */
    CHECK_EQ_INT(pt_json_parse(&d, NULL, 0, 0, &off, &msg), -1);
    CHECK(strcmp(msg, "unexpected end of input") == 0);
    pt_json_doc_free(&d);
}

static void test_errors(void)
{
    static const struct {
        const char *in;
        const char *msg;
        size_t off;
    } cases[] = {
        {"", "unexpected end of input", 0},
        {"[1,", "unexpected end of input", 3},
        {"x", "unexpected character", 0},
        {"[1,]", "unexpected character", 3},
        {"[1 2]", "expected ',' or ']'", 3},
        {"{\"a\":1 \"b\"}", "expected ',' or '}'", 7},
        {"{1:2}", "expected string key", 1},
        {"{\"a\",1}", "expected ':' after object key", 4},
        {"1 2", "trailing characters after value", 2},
        {"\"abc", "unterminated string", 0},
        {"[\"a\\", "unterminated string", 1},
        {"\"a\\qb\"", "invalid escape", 2},
        {"\"\\u12x4\"", "invalid \\u escape", 1},
        {"\"ab\\udc00\"", "lone surrogate in \\u escape", 3},
        {"\"ab\\ud800x\"", "lone surrogate in \\u escape", 3},
        {"\"ab\xFF\"", "invalid UTF-8 in string", 3},
        {"\"abcdefghijkl\x01\"", "control character in string", 13},
        {"012", "leading zero in number", 1},
        {"1.x", "invalid number", 2},
        {"-", "invalid number", 1},
        {"nul", "invalid literal", 0},
        {"[[[1]]]", "nesting too deep", 2},
    };
    jdoc d = {0};
    int ok = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t off = 999;
        const char *msg = NULL;
        uint32_t depth = i == sizeof cases / sizeof cases[0] - 1 ? 2 : 0;
        int rc = parse_str(&d, cases[i].in, depth, &off, &msg);
        if (rc != -1 || msg == NULL || strcmp(msg, cases[i].msg) != 0 || off != cases[i].off) {
            fprintf(stderr, "%s: got %d %s at %zu, want %s at %zu\n", cases[i].in, rc,
                    msg ? msg : "(null)", off, cases[i].msg, cases[i].off);
            ok = 0;
        }
        size_t voff = 999;
        const char *vmsg = NULL;
        if (panto_json_validate((const uint8_t *)cases[i].in, strlen(cases[i].in), depth, &voff,
                                &vmsg) != PANTO_ERROR ||
            vmsg != msg || voff != off) {
            fprintf(stderr, "%s: panto_json_validate differs\n", cases[i].in);
            ok = 0;
        }
    }
    CHECK(ok);
    CHECK_EQ_INT(panto_json_validate((const uint8_t *)"[]", 2, 0, NULL, NULL), PANTO_OK);
    CHECK_EQ_INT(panto_json_validate(NULL, 5, 0, NULL, NULL), PANTO_ERROR);
    pt_json_doc_free(&d);
}

/* ------------------------------------------------------------- nesting */

static char *nested(size_t depth, int objects)
{
    size_t per = objects ? 5 : 1;   /* {"a": ... } */
    char *s = malloc(depth * (per + 1) + 2);
    size_t o = 0;
    for (size_t i = 0; i < depth; i++) {
        if (objects) {
            memcpy(s + o, "{\"a\":", 5);
            o += 5;
        } else {
            s[o++] = '[';
        }
    }
    s[o++] = '1';
    for (size_t i = 0; i < depth; i++)
        s[o++] = objects ? '}' : ']';
    s[o] = 0;
    return s;
}

static void test_depth(void)
{
    jdoc d = {0};
    size_t off;
    const char *msg;
    for (int obj = 0; obj <= 1; obj++) {
        /* default 128 */
        char *s = nested(128, obj);
        CHECK_EQ_INT(parse_str(&d, s, 0, &off, &msg), 0);
        free(s);
        s = nested(129, obj);
        CHECK_EQ_INT(parse_str(&d, s, 0, &off, &msg), -1);
        CHECK(strcmp(msg, "nesting too deep") == 0);
        CHECK_EQ_INT(off, obj ? 128 * 5 : 128);
        CHECK_EQ_INT(panto_json_validate((const uint8_t *)s, strlen(s), 0, NULL, NULL),
                     PANTO_ERROR);
        CHECK_EQ_INT(panto_json_validate((const uint8_t *)s, strlen(s), 129, NULL, NULL),
                     PANTO_OK);
        free(s);
        /* very deep, within an explicit limit: no recursion */
        s = nested(200000, obj);
        CHECK_EQ_INT(parse_str(&d, s, 200000, &off, &msg), 0);
        CHECK_EQ_INT(d.nodes[0].type, obj ? JV_OBJECT : JV_ARRAY);
        CHECK_EQ_INT(d.nodes[0].len, strlen(s));
        CHECK_EQ_INT(panto_json_validate((const uint8_t *)s, strlen(s), 200000, NULL, NULL),
                     PANTO_OK);
        CHECK_EQ_INT(parse_str(&d, s, 199999, &off, &msg), -1);
        CHECK(strcmp(msg, "nesting too deep") == 0);
        free(s);
    }
    /* max_depth 1 */
    CHECK_EQ_INT(parse_str(&d, "[1,{}]", 1, &off, &msg), -1);
    CHECK_EQ_INT(parse_str(&d, "[1,2]", 1, &off, &msg), 0);
    CHECK_EQ_INT(parse_str(&d, "7", 1, &off, &msg), 0);
    /* a deep but unterminated document: clean error, no hang */
    size_t n = 1000000;
    char *s = malloc(n);
    memset(s, '[', n);
    CHECK_EQ_INT(pt_json_parse(&d, (const uint8_t *)s, n, 2000000, &off, &msg), -1);
    CHECK(strcmp(msg, "unexpected end of input") == 0);
    CHECK_EQ_INT(pt_json_parse(&d, (const uint8_t *)s, n, 0, &off, &msg), -1);
    CHECK(strcmp(msg, "nesting too deep") == 0);
    free(s);
    pt_json_doc_free(&d);
}

/* -------------------------------------------------------------- values */

static void test_big_string(void)
{
    size_t n = 10u << 20;
    uint8_t *s = malloc(n + 2);
    s[0] = '"';
    for (size_t i = 1; i <= n; i++)
        s[i] = (uint8_t)('a' + i % 26);
    /* some multi-byte characters and escapes in the middle */
    memcpy(s + 1000, "\xC3\xA9", 2);
    memcpy(s + 5000000, "\xF0\x9F\x98\x80", 4);
    s[n + 1] = '"';
    jdoc d = {0};
    size_t off = 0;
    const char *msg = NULL;
    CHECK_EQ_INT(pt_json_parse(&d, s, n + 2, 0, &off, &msg), 0);
    CHECK_EQ_INT(d.n, 1);
    CHECK_EQ_INT(d.nodes[0].type, JV_STRING);
    CHECK_EQ_INT(d.nodes[0].len, n);
    CHECK_EQ_INT(d.nodes[0].escaped, 0);
    parena a = {0};
    panto_str str;
    CHECK_EQ_INT(pt_json_string(&d.nodes[0], &a, &str), 0);
    CHECK(str.ptr == (const char *)s + 1);
    CHECK_EQ_INT(a.bytes, 0);
    /* with an escape it is copied into the arena */
    memcpy(s + 7000000, "\\n", 2);
    CHECK_EQ_INT(pt_json_parse(&d, s, n + 2, 0, &off, &msg), 0);
    CHECK_EQ_INT(d.nodes[0].escaped, 1);
    CHECK_EQ_INT(pt_json_string(&d.nodes[0], &a, &str), 0);
    CHECK_EQ_INT(str.len, n - 1);
    CHECK(str.ptr != NULL && str.ptr[6999999] == '\n' && memcmp(str.ptr, s + 1, 6999999) == 0);
    CHECK(a.bytes >= n - 1);
    /* a control character deep inside is found */
    s[9000000] = 0x1F;
    CHECK_EQ_INT(pt_json_parse(&d, s, n + 2, 0, &off, &msg), -1);
    CHECK_EQ_INT(off, 9000000);
    pt_parena_free(&a);
    pt_json_doc_free(&d);
    free(s);
}

static void test_unescape(void)
{
    static const struct {
        const char *json;
        const char *want;
        size_t want_len;
    } cases[] = {
        {"\"plain\"", "plain", 5},
        {"\"a\\nb\"", "a\nb", 3},
        {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t", 8},
        {"\"\\u0041\\u00e9\\u20AC\"", "A\xC3\xA9\xE2\x82\xAC", 6},
        {"\"\\u0000x\"", "\0x", 2},
        {"\"\\u007f\\u0080\\u07FF\\u0800\\uFFFF\"", "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF", 11},
        {"\"\\ud83d\\ude00\"", "\xF0\x9F\x98\x80", 4},
        {"\"\\uD800\\uDC00\"", "\xF0\x90\x80\x80", 4},
        {"\"\\uDBFF\\uDFFF!\"", "\xF4\x8F\xBF\xBF!", 5},
        {"\"x\\ud834\\udd1ey\"", "x\xF0\x9D\x84\x9Ey", 6},
        {"\"\xC3\xA9\\t\"", "\xC3\xA9\t", 3},
    };
    jdoc d = {0};
    parena a = {0};
    int ok = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t off;
        const char *msg;
        panto_str out = {0};
        if (parse_str(&d, cases[i].json, 0, &off, &msg) != 0 ||
            pt_json_string(&d.nodes[0], &a, &out) != 0 || out.len != cases[i].want_len ||
            memcmp(out.ptr, cases[i].want, out.len) != 0) {
            fprintf(stderr, "unescape %s failed\n", cases[i].json);
            ok = 0;
            continue;
        }
        /* pt_json_string_eq agrees (for strings without NUL) */
        if (memchr(cases[i].want, 0, cases[i].want_len) == NULL) {
            char tmp[64];
            memcpy(tmp, cases[i].want, cases[i].want_len);
            tmp[cases[i].want_len] = 0;
            if (!pt_json_string_eq(&d.nodes[0], tmp))
                ok = 0;
            tmp[cases[i].want_len - 1] ^= 1;
            if (pt_json_string_eq(&d.nodes[0], tmp))
                ok = 0;
            tmp[cases[i].want_len - 1] = 0;
            if (pt_json_string_eq(&d.nodes[0], tmp))
                ok = 0;
        }
    }
    CHECK(ok);
    /* not a string */
    size_t off;
    const char *msg;
    panto_str out;
    CHECK_EQ_INT(parse_str(&d, "12", 0, &off, &msg), 0);
    CHECK_EQ_INT(pt_json_string(&d.nodes[0], &a, &out), -1);
    CHECK_EQ_INT(pt_json_string(NULL, &a, &out), -1);
    CHECK(!pt_json_string_eq(&d.nodes[0], "12"));
    CHECK(!pt_json_string_eq(NULL, ""));
    pt_parena_free(&a);
    pt_json_doc_free(&d);
}

static void test_access(void)
{
    jdoc d = {0};
    size_t off;
    const char *msg;
    const char *doc =
        "{\"id\":\"msg_1\",\"n\":42,\"big\":18446744073709551615,\"huge\":99999999999999999999999,"
        "\"neg\":-1,\"frac\":1.5,\"exp\":1e3,\"zero\":0,\"nul\":null,\"t\":true,"
        "\"arr\":[10,\"x\",[],{\"k\":\"v\"}],\"dup\":1,\"dup\":2,\"\\u0065sc\":\"e\","
        "\"obj\":{ \"a\" : [1, 2] }}";
    CHECK_EQ_INT(parse_str(&d, doc, 0, &off, &msg), 0);
    const jnode *root = &d.nodes[0];
    CHECK_EQ_INT(root->type, JV_OBJECT);
    CHECK_EQ_INT(root->count, 15);
    CHECK_EQ_INT(root->len, strlen(doc));
    CHECK(root->p == doc);
    uint64_t v = 7;
    CHECK_EQ_INT(pt_json_u64(pt_json_get(&d, root, "n"), &v), 0);
    CHECK_EQ_INT(v, 42);
    CHECK_EQ_INT(pt_json_u64(pt_json_get(&d, root, "zero"), &v), 0);
    CHECK_EQ_INT(v, 0);
    CHECK_EQ_INT(pt_json_u64(pt_json_get(&d, root, "big"), &v), 0);
    CHECK(v == UINT64_MAX);
    v = 0;
    CHECK_EQ_INT(pt_json_u64(pt_json_get(&d, root, "huge"), &v), 0);
    CHECK(v == UINT64_MAX);
    CHECK_EQ_INT(pt_json_u64(pt_json_get(&d, root, "neg"), &v), -1);
    CHECK_EQ_INT(pt_json_u64(pt_json_get(&d, root, "frac"), &v), -1);
    CHECK_EQ_INT(pt_json_u64(pt_json_get(&d, root, "exp"), &v), -1);
    CHECK_EQ_INT(pt_json_u64(pt_json_get(&d, root, "id"), &v), -1);
    CHECK_EQ_INT(pt_json_u64(pt_json_get(&d, root, "missing"), &v), -1);
    CHECK_EQ_INT(pt_json_u64(NULL, &v), -1);
    /* last duplicate wins; escaped keys match after unescaping */
    CHECK_EQ_INT(pt_json_u64(pt_json_get(&d, root, "dup"), &v), 0);
    CHECK_EQ_INT(v, 2);
    CHECK(pt_json_string_eq(pt_json_get(&d, root, "esc"), "e"));
    CHECK(pt_json_get(&d, root, "\\u0065sc") == NULL);
    CHECK(pt_json_string_eq(pt_json_get(&d, root, "id"), "msg_1"));
    CHECK(pt_json_get(&d, root, "i") == NULL);
    CHECK(pt_json_get(&d, root, "idd") == NULL);
    CHECK(pt_json_get(&d, NULL, "id") == NULL);
    CHECK(pt_json_get(&d, pt_json_get(&d, root, "arr"), "0") == NULL);
    CHECK(pt_json_get(&d, pt_json_get(&d, root, "n"), "x") == NULL);
    /* null */
    CHECK(pt_json_is_null(pt_json_get(&d, root, "nul")));
    CHECK(pt_json_is_null(pt_json_get(&d, root, "missing")));
    CHECK(pt_json_is_null(NULL));
    CHECK(!pt_json_is_null(pt_json_get(&d, root, "t")));
    CHECK_EQ_INT(pt_json_get(&d, root, "t")->type, JV_TRUE);
    /* arrays */
    const jnode *arr = pt_json_get(&d, root, "arr");
    CHECK(arr != NULL && arr->type == JV_ARRAY);
    CHECK_EQ_INT(arr->count, 4);
    CHECK_STR(arr->p, arr->len, "[10,\"x\",[],{\"k\":\"v\"}]");
    CHECK_EQ_INT(pt_json_u64(pt_json_at(&d, arr, 0), &v), 0);
    CHECK_EQ_INT(v, 10);
    CHECK(pt_json_string_eq(pt_json_at(&d, arr, 1), "x"));
    const jnode *empty = pt_json_at(&d, arr, 2);
    CHECK(empty != NULL && empty->type == JV_ARRAY && empty->count == 0);
    CHECK(pt_json_first(&d, empty) == NULL);
    CHECK(pt_json_at(&d, empty, 0) == NULL);
    CHECK_STR(empty->p, empty->len, "[]");
    CHECK(pt_json_string_eq(pt_json_get(&d, pt_json_at(&d, arr, 3), "k"), "v"));
    CHECK(pt_json_at(&d, arr, 4) == NULL);
    CHECK(pt_json_at(&d, arr, (size_t)-1) == NULL);
    CHECK(pt_json_at(&d, root, 0) == NULL);
    CHECK(pt_json_at(&d, NULL, 0) == NULL);
    /* iteration */
    int k = 0;
    for (const jnode *c = pt_json_first(&d, arr); c != NULL; c = pt_json_next(&d, c))
        k++;
    CHECK_EQ_INT(k, 4);
    k = 0;
    for (const jnode *c = pt_json_first(&d, root); c != NULL; c = pt_json_next(&d, c))
        k++;
    CHECK_EQ_INT(k, 30);
    CHECK(pt_json_next(&d, root) == NULL);
    CHECK(pt_json_first(&d, NULL) == NULL);
    const jnode *obj = pt_json_get(&d, root, "obj");
    CHECK_STR(obj->p, obj->len, "{ \"a\" : [1, 2] }");
    CHECK_STR(pt_json_get(&d, obj, "a")->p, pt_json_get(&d, obj, "a")->len, "[1, 2]");
    CHECK_STR(pt_json_get(&d, root, "frac")->p, pt_json_get(&d, root, "frac")->len, "1.5");
    CHECK_STR(pt_json_get(&d, root, "id")->p, pt_json_get(&d, root, "id")->len, "msg_1");
    CHECK_STR(pt_json_get(&d, root, "t")->p, pt_json_get(&d, root, "t")->len, "true");
    /* node storage is reused between parses */
    size_t cap = d.cap;
    CHECK(pt_json_doc_memory(&d) == cap * sizeof(jnode));
    for (int i = 0; i < 100; i++)
        parse_str(&d, doc, 0, &off, &msg);
    CHECK_EQ_INT(d.cap, cap);
    /* a scalar root */
    CHECK_EQ_INT(parse_str(&d, " \"s\" ", 0, &off, &msg), 0);
    CHECK_EQ_INT(d.n, 1);
    CHECK(pt_json_string_eq(&d.nodes[0], "s"));
    pt_json_doc_free(&d);
    CHECK_EQ_INT(pt_json_doc_memory(&d), 0);
}

/* Mutations of valid documents never crash, and the storing parser and the
 * validator always agree. */
static void test_mutations(void)
{
    static const char *seeds[] = {
        "{\"a\":[1,2.5e-3,\"x\\u00e9\\ud83d\\ude00\",true,false,null,{}],\"b\":\"\xC3\xA9\"}",
        "[[[[\"deep\"]]],{\"k\":{\"k\":{\"k\":-0.0}}}]",
        "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\\n\"}}",
    };
    static const char alphabet[] = "{}[],:\"\\u0123456789eE+-.tfnrl \t\n\xC3\xA9\xED\xA0\x80\xF0\xFF";
    uint64_t x = 0x9E3779B97F4A7C15ull;
    jdoc d = {0};
    int agree = 1;
    for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++) {
        size_t n = strlen(seeds[si]);
        uint8_t *buf = malloc(n + 8);
        for (int round = 0; round < 3000; round++) {
            memcpy(buf, seeds[si], n);
            size_t m = n;
            int edits = 1 + round % 3;
            for (int e = 0; e < edits; e++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                size_t at = (size_t)(x % m);
                uint8_t c = (uint8_t)alphabet[(x >> 20) % (sizeof alphabet - 1)];
                switch ((x >> 40) % 3) {
                case 0: buf[at] = c; break;
                case 1: if (m > 1) { memmove(buf + at, buf + at + 1, m - at - 1); m--; } break;
                default: if (m < n + 8) { memmove(buf + at + 1, buf + at, m - at); buf[at] = c; m++; } break;
                }
            }
            uint8_t *exact = malloc(m);
            memcpy(exact, buf, m);
            size_t off, voff;
            const char *msg, *vmsg;
            int rc = pt_json_parse(&d, exact, m, 3, &off, &msg);
            int v = panto_json_validate(exact, m, 3, &voff, &vmsg);
            if ((rc == 0) != (v == PANTO_OK) || (rc != 0 && (off != voff || msg != vmsg)))
                agree = 0;
            if (rc == 0) {
                /* every string of an accepted document unescapes to UTF-8 */
                parena a = {0};
                for (size_t i = 0; i < d.n; i++) {
                    panto_str s;
                    if (d.nodes[i].type == JV_STRING &&
                        (pt_json_string(&d.nodes[i], &a, &s) != 0 ||
                         pt_utf8_valid_prefix((const uint8_t *)s.ptr, s.len) != s.len))
                        agree = 0;
                }
                pt_parena_free(&a);
            }
            free(exact);
        }
        free(buf);
    }
    CHECK(agree);
    pt_json_doc_free(&d);
}

/* An independent UTF-8 check for test_scan_random: decode the code point
 * and reject what RFC 3629 excludes.  The length of the character at s[0],
 * or 0 when it is not a valid one. */
static size_t ref_utf8_char(const uint8_t *s, size_t n)
{
    size_t len;
    uint32_t cp;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xE0) == 0xC0) {
        len = 2;
        cp = s[0] & 0x1Fu;
    } else if ((s[0] & 0xF0) == 0xE0) {
        len = 3;
        cp = s[0] & 0x0Fu;
    } else if ((s[0] & 0xF8) == 0xF0) {
        len = 4;
        cp = s[0] & 0x07u;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[k] & 0x3Fu);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    return len;
}

/* The string scanner (16 bytes at a time, UTF-8 checked in the vector)
 * against the reference above on random strings built from valid and
 * invalid pieces at every alignment, each in a buffer of exactly its size
 * (ASan sees any read past it): the same verdict, position and escape
 * flag.  And pt_json_unescape_slack, with exactly PT_SLACK bytes of slack,
 * gives what pt_json_string does. */
static void test_scan_random(void)
{
    static const char *pieces[] = {
        "a", "b", " ", "hello ", "0123456789abcdef", "\xC3\xA9", "\xC2\x80", "\xDF\xBF",
        "\xE0\xA0\x80", "\xE2\x82\xAC", "\xED\x9F\xBF", "\xEE\x80\x80", "\xEF\xBF\xBF",
        "\xF0\x90\x80\x80", "\xF0\x9F\x98\x80", "\xF3\xBF\xBF\xBF", "\xF4\x8F\xBF\xBF",
        "\\n", "\\\"", "\\\\", "\\u00e9", "\\ud83d\\ude00",
        /* invalid */
        "\x80", "\xBF", "\xC0\x80", "\xC1\xBF", "\xC3", "\xE0\x9F\xBF", "\xED\xA0\x80",
        "\xE2\x82", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF",
        "\xF0\x9F\x98", "\x01", "\x1F",
    };
    const size_t n_pieces = sizeof pieces / sizeof pieces[0], n_valid = 22;
    uint64_t x = 0x2545F4914F6CDD1Dull;
    int agree = 1, unescaped_ok = 1;
    size_t accepted = 0, rejected = 0;
    for (int round = 0; round < 40000 && agree; round++) {
        uint8_t body[256];
        size_t m = 0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t n_parts = (size_t)(x % 24);
        int bad_ok = (x >> 8) % 4 == 0; /* one string in four may hold invalid pieces */
        for (size_t k = 0; k < n_parts; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            size_t pi = (size_t)(x % (bad_ok ? n_pieces : n_valid));
            size_t pl = strlen(pieces[pi]);
            memcpy(body + m, pieces[pi], pl);
            m += pl;
        }
        size_t tail = (size_t)((x >> 32) % 40); /* what follows the closing quote */
        size_t len = m + 1 + tail;
        uint8_t *buf = malloc(len);
        memcpy(buf, body, m);
        buf[m] = '"';
        memset(buf + m + 1, 'x', tail);
        /* the reference: '"' ends it, escapes are whole, control bytes
         * and invalid UTF-8 fail where they start */
        int want_rc = -1, want_esc = 0;
        size_t want_at = 0, i = 0;
        for (;;) {
            uint8_t c = buf[i];
            if (c == '"') {
                want_rc = 0;
                want_at = i;
                break;
            }
            if (c == '\\') {
                want_esc = 1;
                i += buf[i + 1] == 'u' ? 6 : 2;
                continue;
            }
            size_t cl = c < 0x20 ? 0 : ref_utf8_char(buf + i, len - i);
            if (cl == 0) {
                want_at = i;
                break;
            }
            i += cl;
        }
        size_t at = 0;
        int esc = 0;
        int rc = pt_json_scan_str(buf, len, &at, &esc);
        if (rc != want_rc || at != want_at || (rc == 0 && esc != want_esc)) {
            fprintf(stderr, "  scan of %zu bytes: rc %d at %zu esc %d, want rc %d at %zu esc %d\n", m,
                    rc, at, esc, want_rc, want_at, want_esc);
            agree = 0;
        }
        if (rc == 0) {
            accepted++;
            jnode nd;
            memset(&nd, 0, sizeof nd);
            nd.type = JV_STRING;
            nd.escaped = (uint8_t)esc;
            nd.p = (const char *)buf;
            nd.len = at;
            parena a = {0};
            panto_str want;
            uint8_t *src = malloc(at + PT_SLACK), *dst = malloc(at + PT_SLACK);
            memcpy(src, buf, at);
            size_t got = esc ? pt_json_unescape_slack(src, at, dst) : at;
            if (pt_json_string(&nd, &a, &want) != 0 || got != want.len ||
                (esc && memcmp(dst, want.ptr, got) != 0))
                unescaped_ok = 0;
            free(src);
            free(dst);
            pt_parena_free(&a);
        } else {
            rejected++;
        }
        free(buf);
    }
    CHECK(agree);
    CHECK(unescaped_ok);
    CHECK(accepted > 10000 && rejected > 2000); /* both kinds were tried */
}

int main(void)
{
    test_suite();
    test_grammar();
    test_errors();
    test_depth();
    test_big_string();
    test_unescape();
    test_access();
    test_mutations();
    test_scan_random();
    return test_report("test_json");
}

"""The C ABI as Python sees it: version, the layout of every struct in
include/panto.h (size and every field offset), the enum values, and the
agreement of all three with what the C core asserts (_Static_assert in
csrc/)."""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

import panto
from panto import decoder
from panto._ffi import ffi, lib

ROOT = Path(__file__).resolve().parent.parent

LP64 = ffi.sizeof("void *") == 8 and ffi.sizeof("size_t") == 8

# struct -> (sizeof, {field: offsetof}) on LP64 (Linux/macOS x86-64, arm64)
LAYOUT: dict[str, tuple[int, dict[str, int]]] = {
    "panto_str": (16, {"ptr": 0, "len": 8}),
    "panto_usage": (
        40,
        {
            "input_tokens": 0,
            "cache_read_tokens": 8,
            "cache_write_tokens": 16,
            "output_tokens": 24,
            "reasoning_tokens": 32,
        },
    ),
    "panto_message_start": (72, {"id": 0, "model": 16, "usage": 32}),
    "panto_block_start": (8, {"index": 0, "block_kind": 4}),
    "panto_tool_details": (40, {"index": 0, "id": 8, "name": 24}),
    "panto_content_delta": (24, {"index": 0, "block_kind": 4, "text": 8}),
    "panto_block_complete": (
        96,
        {
            "index": 0,
            "block_kind": 4,
            "flags": 8,
            "reserved": 12,
            "text": 16,
            "signature": 32,
            "tool_id": 48,
            "tool_name": 64,
            "citations": 80,
        },
    ),
    "panto_message_complete": (64, {"stop_reason": 0, "raw_stop_reason": 8, "usage": 24}),
    "panto_sse_event": (56, {"event": 0, "data": 16, "id": 32, "retry": 48}),
    "panto_event": (104, {"kind": 0, "u": 8}),
    "panto_error": (
        48,
        {"code": 0, "retryable": 4, "message": 8, "provider_type": 24, "offset": 40},
    ),
    "panto_stream_options": (
        32,
        {
            "version": 0,
            "max_json_depth": 4,
            "max_event_bytes": 8,
            "max_block_bytes": 16,
            "max_buffer_bytes": 24,
        },
    ),
}

UNION_MEMBERS = {
    "message_start": "panto_message_start",
    "block_start": "panto_block_start",
    "tool_details": "panto_tool_details",
    "content_delta": "panto_content_delta",
    "block_complete": "panto_block_complete",
    "message_complete": "panto_message_complete",
    "sse": "panto_sse_event",
}

ENUMS = {
    "PANTO_OK": 0,
    "PANTO_EVENT": 1,
    "PANTO_NEED_MORE": 2,
    "PANTO_DONE": 3,
    "PANTO_ERROR": -1,
    "PANTO_WIRE_SSE": 1,
    "PANTO_WIRE_OPENAI_CHAT": 2,
    "PANTO_WIRE_ANTHROPIC_MESSAGES": 3,
    "PANTO_WIRE_OPENAI_RESPONSES": 4,
    "PANTO_EV_MESSAGE_START": 1,
    "PANTO_EV_BLOCK_START": 2,
    "PANTO_EV_TOOL_DETAILS": 3,
    "PANTO_EV_CONTENT_DELTA": 4,
    "PANTO_EV_BLOCK_COMPLETE": 5,
    "PANTO_EV_MESSAGE_COMPLETE": 6,
    "PANTO_EV_SSE": 7,
    "PANTO_BLOCK_TEXT": 1,
    "PANTO_BLOCK_THINKING": 2,
    "PANTO_BLOCK_REDACTED_THINKING": 3,
    "PANTO_BLOCK_TOOL_USE": 4,
    "PANTO_BLOCK_SERVER": 5,
    "PANTO_STOP_STOP": 1,
    "PANTO_STOP_TOOL_USE": 2,
    "PANTO_STOP_LENGTH": 3,
    "PANTO_STOP_REFUSAL": 4,
    "PANTO_STOP_PAUSE": 5,
    "PANTO_STOP_ERROR": 6,
    "PANTO_STOP_OTHER": 7,
    "PANTO_ERR_NONE": 0,
    "PANTO_ERR_BAD_SSE": 1,
    "PANTO_ERR_BAD_JSON": 2,
    "PANTO_ERR_PROTOCOL": 3,
    "PANTO_ERR_PROVIDER": 4,
    "PANTO_ERR_TRUNCATED": 5,
    "PANTO_ERR_LIMIT": 6,
    "PANTO_ERR_INVALID_ARGUMENT": 7,
    "PANTO_ERR_NO_MEMORY": 8,
}


def header_structs() -> set[str]:
    """Every public struct typedef of the cdef region (opaque ones excluded)."""
    typedefs, _structs, _unions = ffi.list_types()
    names = set()
    for name in typedefs:
        if not name.startswith("panto_"):
            continue
        t = ffi.typeof(name)
        if t.kind != "struct":
            continue
        try:
            ffi.sizeof(t)
        except ffi.error:  # opaque (panto_stream); don't touch .fields (cffi asserts)
            continue
        names.add(name)
    return names


DEFINES = {
    "PANTO_ABI_VERSION": 2,
    "PANTO_STREAM_OPTIONS_VERSION": 1,
    "PANTO_BLOCK_FLAG_PARTIAL": 1,
}


def test_integer_defines():
    for name, value in DEFINES.items():
        assert getattr(lib, name) == value, name


def test_abi_version():
    assert lib.PANTO_ABI_VERSION == 2
    assert lib.panto_abi_version() == lib.PANTO_ABI_VERSION


def test_versions_agree():
    core = ffi.string(lib.panto_version()).decode()
    assert re.fullmatch(r"\d+\.\d+\.\d+", core)
    # the header's three macros are the single source of the version
    macros = (lib.PANTO_VERSION_MAJOR, lib.PANTO_VERSION_MINOR, lib.PANTO_VERSION_PATCH)
    assert core == ".".join(map(str, macros))
    assert core == panto.__version__
    # pyproject and CMake read the macros (no literal version of their own);
    # the installed distribution's metadata came from them.
    assert importlib.metadata.version("panto") == core
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"]
    assert "version" in pyproject["project"]["dynamic"]
    provider = pyproject["tool"]["scikit-build"]["metadata"]["version"]
    assert provider["input"] == "include/panto.h"
    header = (ROOT / "include" / "panto.h").read_text(encoding="utf-8")
    assert provider["result"].format(**re.search(provider["regex"], header).groupdict()) == core
    cmake = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    assert "PANTO_VERSION_MAJOR" in cmake and "include/panto.h" in cmake
    assert not re.search(r"project\(panto\s+VERSION\s+\d", cmake)


def test_the_table_covers_every_struct_and_field():
    assert header_structs() == set(LAYOUT)
    for name, (_size, fields) in LAYOUT.items():
        assert [f for f, _ in ffi.typeof(name).fields] == list(fields), name
    union = ffi.typeof("panto_event").fields[1][1].type
    assert union.kind == "union"
    assert {f: t.type.cname for f, t in union.fields} == UNION_MEMBERS


@pytest.mark.skipif(not LP64, reason="the table is for LP64 platforms")
@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_struct_layout(name):
    size, fields = LAYOUT[name]
    assert ffi.sizeof(name) == size
    for field, offset in fields.items():
        assert ffi.offsetof(name, field) == offset, f"{name}.{field}"


def test_union_members_start_at_the_union():
    for member in UNION_MEMBERS:
        assert ffi.offsetof("panto_event", "u", member) == 8


def test_enums_are_int_sized():
    for t in (
        "panto_status",
        "panto_wire",
        "panto_event_kind",
        "panto_block_kind",
        "panto_stop_reason",
        "panto_error_code",
    ):
        assert ffi.sizeof(t) == 4, t


def test_enum_values():
    for name, value in ENUMS.items():
        assert getattr(lib, name) == value, name
    # every PANTO_* enum constant of the header is in the table
    header = (ROOT / "include" / "panto.h").read_text(encoding="utf-8")
    declared = set(re.findall(r"^\s*(PANTO_[A-Z_]+)\s*=\s*-?\d+", header, re.M))
    assert declared == set(ENUMS)


def test_static_asserts_in_the_core_match():
    """csrc/ pins the layout with _Static_assert; Python must agree."""
    sources = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "csrc").glob("*.c")))
    sizes = re.findall(r"_Static_assert\(\s*sizeof\((panto_\w+)\)\s*==\s*(\d+)", sources)
    offsets = re.findall(
        r"_Static_assert\(\s*offsetof\((panto_\w+),\s*(\w+)\)\s*==\s*(\d+)", sources
    )
    assert sizes and offsets, "expected layout _Static_asserts in csrc/*.c"
    if not LP64:
        pytest.skip("the core's asserts are for LP64")
    for name, n in sizes:
        assert ffi.sizeof(name) == int(n), name
    for name, field, n in offsets:
        assert ffi.offsetof(name, field) == int(n), f"{name}.{field}"


def test_name_functions_match_the_binding_tables():
    def name(fn, i: int) -> str:
        return ffi.string(fn(i)).decode()

    for i, kind in enumerate(decoder._BLOCK_KINDS[1:6], 1):
        assert name(lib.panto_block_kind_name, i) == kind
    for i, reason in enumerate(decoder._STOP_REASONS[1:], 1):
        assert name(lib.panto_stop_reason_name, i) == reason
    for i, code in enumerate(decoder._ERROR_CODES):
        assert name(lib.panto_error_code_name, i) == code
    for wire, value in decoder.WIRES.items():
        assert name(lib.panto_wire_name, value) == wire
    assert name(lib.panto_block_kind_name, 99) == "unknown"
    assert name(lib.panto_event_kind_name, lib.PANTO_EV_CONTENT_DELTA) == "content_delta"


def test_stream_api_misuse_is_reported_not_crashing():
    out = ffi.new("panto_stream **")
    assert lib.panto_stream_new(99, ffi.NULL, out) == lib.PANTO_ERROR
    assert out[0] == ffi.NULL
    lib.panto_stream_free(ffi.NULL)
    assert lib.panto_stream_error(ffi.NULL, ffi.new("panto_error *")) == lib.PANTO_ERROR
    assert lib.panto_stream_new(lib.PANTO_WIRE_SSE, ffi.NULL, out) == lib.PANTO_OK
    s = ffi.gc(out[0], lib.panto_stream_free)
    assert lib.panto_stream_finish(s) == lib.PANTO_OK
    assert lib.panto_stream_feed(s, b"x", 1) == lib.PANTO_ERROR  # feed after finish
    err = ffi.new("panto_error *")
    assert lib.panto_stream_error(s, err) == lib.PANTO_OK
    assert err.code == lib.PANTO_ERR_INVALID_ARGUMENT


def test_options_init_defaults():
    opts = ffi.new("panto_stream_options *")
    assert lib.panto_stream_options_init(opts, lib.PANTO_STREAM_OPTIONS_VERSION) == lib.PANTO_OK
    assert opts.version == lib.PANTO_STREAM_OPTIONS_VERSION
    assert opts.max_event_bytes == 8 << 20
    assert opts.max_block_bytes == 64 << 20
    assert opts.max_buffer_bytes == 64 << 20
    assert opts.max_json_depth == 128
    # an options struct of another (or no) version is refused
    assert lib.panto_stream_options_init(opts, 0) == lib.PANTO_ERROR
    out = ffi.new("panto_stream **")
    zero = ffi.new("panto_stream_options *")
    assert lib.panto_stream_new(lib.PANTO_WIRE_SSE, zero, out) == lib.PANTO_ERROR
    assert lib.panto_stream_new(lib.PANTO_WIRE_SSE, opts, out) == lib.PANTO_OK
    lib.panto_stream_free(out[0])


def test_reset_and_error_offset():
    out = ffi.new("panto_stream **")
    assert lib.panto_stream_new(lib.PANTO_WIRE_OPENAI_CHAT, ffi.NULL, out) == lib.PANTO_OK
    s = ffi.gc(out[0], lib.panto_stream_free)
    ev = ffi.new("panto_event *")
    err = ffi.new("panto_error *")
    body = b'data: {"choices":[]}\n\ndata: {oops\n\n'
    assert lib.panto_stream_feed(s, body, len(body)) == lib.PANTO_OK
    while lib.panto_next_event(s, ev) == lib.PANTO_EVENT:
        pass
    lib.panto_stream_error(s, err)
    assert err.code == lib.PANTO_ERR_BAD_JSON
    assert err.offset == body.index(b"data: {oops")
    assert lib.panto_stream_reset(s) == lib.PANTO_OK
    lib.panto_stream_error(s, err)
    assert err.code == lib.PANTO_ERR_NONE
    ok = b'data: {"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    assert lib.panto_stream_feed(s, ok, len(ok)) == lib.PANTO_OK
    kinds = []
    while lib.panto_next_event(s, ev) == lib.PANTO_EVENT:
        kinds.append(ev.kind)
    assert kinds[0] == lib.PANTO_EV_MESSAGE_START and kinds[-1] == lib.PANTO_EV_MESSAGE_COMPLETE


def test_json_validate_through_the_abi():
    off = ffi.new("size_t *")
    msg = ffi.new("const char **")
    good = b'{"a": [1, 2.5e3, "\\u00e9"]}'
    assert lib.panto_json_validate(good, len(good), 0, off, msg) == lib.PANTO_OK
    assert lib.panto_json_validate(b'{"a": }', 7, 0, off, msg) == lib.PANTO_ERROR
    assert off[0] == 6
    assert ffi.string(msg[0])


def test_cdef_region_is_plain_declarations():
    sys.path.insert(0, str(ROOT / "python" / "panto"))
    try:
        import _build_ffi  # the build script, not the installed package
    finally:
        sys.path.pop(0)
    region = _build_ffi.read_cdef(str(ROOT / "include" / "panto.h"))
    assert "panto_next_event" in region and "PANTO_EXTERN" not in region
    assert "#if" not in region and "#include" not in region


def test_next_events_batches_with_copied_strings():
    out = ffi.new("panto_stream **")
    assert lib.panto_stream_new(lib.PANTO_WIRE_OPENAI_CHAT, ffi.NULL, out) == lib.PANTO_OK
    s = ffi.gc(out[0], lib.panto_stream_free)
    chunk = b'data: {"id":"c","choices":[{"delta":{"content":"%d"}}]}\n\n'
    body = b"".join(chunk % i for i in range(10)) + b"data: [DONE]\n\n"
    assert lib.panto_stream_feed(s, body, len(body)) == lib.PANTO_OK
    evs = ffi.new("panto_event[64]")
    buf = ffi.new("char[4096]")
    n = ffi.new("size_t *")
    assert lib.panto_next_events(s, evs, 64, buf, 4096, n) == lib.PANTO_EVENT
    kinds = [evs[i].kind for i in range(n[0])]
    assert kinds[0] == lib.PANTO_EV_MESSAGE_START and kinds[-1] == lib.PANTO_EV_MESSAGE_COMPLETE
    deltas = [evs[i].u.content_delta.text for i in range(n[0]) if kinds[i] == 4]
    # many SSE events in one call: the strings live in our buffer
    assert b"".join(ffi.unpack(t.ptr, t.len) for t in deltas) == b"0123456789"
    assert all(buf <= t.ptr < buf + 4096 for t in deltas)
    assert lib.panto_next_events(s, evs, 64, buf, 4096, n) == lib.PANTO_DONE and n[0] == 0

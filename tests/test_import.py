"""``import panto`` stays cheap, and the ``panto`` command starts fast and
behaves: --help, --version, ``panto decode`` output, exit codes and errors.
Everything runs in a fresh interpreter (subprocess) so sys.modules is clean."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import panto

HEAVY = ("httpx", "lupa", "cffi", "_cffi_backend", "panto._panto_cffi", "asyncio", "ssl")


def py(code: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code, *args], input=stdin, capture_output=True, timeout=60
    )


def panto_cmd(
    *args: str, stdin: bytes | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "panto", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        cwd=cwd,
    )


def loaded_after(code: str) -> set[str]:
    r = py(code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))")
    assert r.returncode == 0, r.stderr.decode()
    return set(json.loads(r.stdout.decode().splitlines()[-1]))


def test_import_panto_is_cheap():
    mods = loaded_after("import panto")
    assert not {m for m in HEAVY if m in mods}
    assert not {m for m in mods if m.startswith("panto.")}


def test_decoder_does_not_import_httpx_or_lupa():
    mods = loaded_after(
        "import panto; panto.StreamDecoder('sse'); panto.Message; panto.ProviderError"
    )
    assert "panto._panto_cffi" in mods
    assert "httpx" not in mods and "lupa" not in mods and "asyncio" not in mods


def test_the_sync_agent_path_does_not_import_asyncio():
    """asyncio costs ~45 ms to import; only run_async (and the Lua runtime's
    loop thread) need it.  httpx (~50 ms) only run_async and a proxy."""
    mods = loaded_after("import panto.agent, panto.agent.stream, panto.cli.chat")
    assert "asyncio" not in mods and "email.utils" not in mods
    mods = loaded_after(
        "import panto\n"
        "from panto.agent import Agent\n"
        "from panto.config import Config\n"
        "a = Agent(Config(provider='mock', model='anthropic'))\n"
        "a.submit_user_message('hi')\n"
        "with a.run() as s:\n"
        "    text = [e for e in s]\n"
        "a.close()"
    )
    # the stdlib transport (providers.http11), no httpx
    assert "panto.providers.http11" in mods
    assert "httpx" not in mods and "asyncio" not in mods


def test_lazy_attributes():
    assert panto.StreamDecoder is panto.decoder.StreamDecoder
    assert panto.TruncatedStream.__mro__[1] is panto.DecodeError
    assert "StreamDecoder" in dir(panto)
    with pytest.raises(AttributeError):
        panto.no_such_thing  # noqa: B018
    for name in panto.__all__:
        if name in ("Agent", "Config"):
            continue  # other modules' owners; checked by their tests
        assert getattr(panto, name) is not None, name


def test_import_panto_loads_only_the_package_itself():
    """``import panto`` stays cheap by loading nothing: every submodule and
    every third-party module comes on first use.  (A module count, not a
    wall-clock limit, so a loaded machine cannot fail it.)"""
    code = (
        "import sys\nbefore = set(sys.modules)\nimport panto\n"
        "print('\\n'.join(sorted(set(sys.modules) - before)))\n"
    )
    r = py(code)
    assert r.returncode == 0, r.stderr.decode()
    new = set(r.stdout.decode().split())
    assert "panto" in new
    assert {m for m in new if m.startswith("panto.")} == set()
    heavy = {
        "httpx",
        "lupa",
        "cffi",
        "_cffi_backend",
        "asyncio",
        "json",
        "ssl",
        "typing_extensions",
    }
    assert new & heavy == set()


@pytest.mark.parametrize("argv", [["--version"], ["decode", "--help"], ["--help"]])
def test_cli_does_not_import_httpx(argv):
    code = (
        "import sys\nfrom panto.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "assert 'httpx' not in sys.modules and 'lupa' not in sys.modules, 'heavy import'\n"
    )
    r = py(code, *argv)
    assert r.returncode == 0, r.stderr.decode()


def test_help():
    r = panto_cmd("--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    for word in (
        "decode",
        "sessions",
        "config",
        "lua",
        "bootstrap",
        "update",
        "-p",
        "--model",
        "--version",
    ):
        assert word in out, word


def test_version():
    r = panto_cmd("--version")
    assert r.returncode == 0
    assert re.fullmatch(
        rf"panto {re.escape(panto.__version__)} \(core \d+\.\d+\.\d+\)\n", r.stdout.decode()
    )


def test_console_script_is_installed():
    exe = Path(sys.executable).parent / "panto"
    if not exe.exists():
        pytest.skip("no panto console script beside this interpreter")
    r = subprocess.run([str(exe), "--version"], capture_output=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith(b"panto ")


ANTHROPIC = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","model":"claude-x","usage":{"input_tokens":5}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"h\xc3\xa9llo"}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)
OPENAI = (
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def lines_of(r: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in r.stdout.decode("utf-8").splitlines()]


@pytest.mark.parametrize("chunk", ["65536", "1", "7"])
def test_decode_anthropic_file(tmp_path, chunk):
    f = tmp_path / "a.sse"
    f.write_bytes(ANTHROPIC)
    r = panto_cmd("decode", "--chunk-size", chunk, str(f))
    assert r.returncode == 0, r.stderr.decode()
    out = lines_of(r)
    assert [d["type"] for d in out] == [
        "message_start",
        "block_start",
        "content_delta",
        "block_complete",
        "message_complete",
        "message",
    ]
    assert out[2]["text"] == "héllo"
    assert "héllo".encode() in r.stdout  # ensure_ascii=False
    assert b", " not in r.stdout.split(b"\n")[1]  # compact separators
    assert out[-1] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "héllo"}],
        "usage": {
            "input_tokens": 5,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "output_tokens": 2,
            "reasoning_tokens": 0,
        },
        "stop_reason": "stop",
        "model": "claude-x",
    }


def test_decode_openai_from_stdin_autodetects():
    r = panto_cmd("decode", stdin=OPENAI)
    assert r.returncode == 0, r.stderr.decode()
    out = lines_of(r)
    assert out[-1]["type"] == "message" and out[-1]["content"] == [{"type": "text", "text": "hi"}]
    r = panto_cmd("decode", "-", stdin=OPENAI)
    assert r.returncode == 0


def test_decode_raw_sse_and_wire_override(tmp_path):
    f = tmp_path / "s.sse"
    f.write_bytes(b"event: x\ndata: 1\n\n")
    r = panto_cmd("decode", str(f))
    assert r.returncode == 0
    assert lines_of(r) == [{"type": "sse", "event": "x", "data": "1", "id": "", "retry": None}]
    f.write_bytes(ANTHROPIC)
    r = panto_cmd("decode", "--wire", "sse", str(f))
    assert r.returncode == 0
    assert {d["type"] for d in lines_of(r)} == {"sse"}


def test_decode_error_prints_events_then_the_error(tmp_path):
    f = tmp_path / "bad.sse"
    f.write_bytes(
        ANTHROPIC.split(b"event: content_block_stop")[0]
        + b"event: content_block_stop\ndata: {oops}\n\n"
    )
    r = panto_cmd("decode", str(f))
    assert r.returncode == 1
    assert [d["type"] for d in lines_of(r)] == ["message_start", "block_start", "content_delta"]
    err = r.stderr.decode()
    assert err.startswith(f"panto decode: {f}: bad_json: ")
    assert "Traceback" not in err


def test_decode_truncated_and_provider_error(tmp_path):
    f = tmp_path / "t.sse"
    f.write_bytes(ANTHROPIC.split(b"event: message_stop")[0])
    r = panto_cmd("decode", str(f))
    assert r.returncode == 1
    assert "truncated: " in r.stderr.decode()
    assert lines_of(r)[-1]["type"] == "block_complete"
    f.write_bytes(
        ANTHROPIC.split(b"event: content_block_start")[0]
        + b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    r = panto_cmd("decode", str(f))
    assert r.returncode == 1
    assert r.stderr.decode().strip() == f"panto decode: {f}: provider: overloaded_error: Overloaded"


def test_decode_usage_errors(tmp_path):
    for argv in (["--chunk-size", "0"], ["--wire", "nope"], ["--bogus"], ["a", "b"]):
        r = panto_cmd("decode", *argv)
        assert r.returncode == 2, argv
        assert b"usage: panto decode" in r.stderr
    r = panto_cmd("decode", str(tmp_path / "missing.sse"))
    assert r.returncode == 1
    assert r.stderr.decode().startswith(f"panto decode: {tmp_path / 'missing.sse'}: ")


def test_decode_broken_pipe_is_quiet(tmp_path):
    f = tmp_path / "big.sse"
    f.write_bytes(b"".join(b"data: %d\n\n" % i for i in range(200_000)))
    p = subprocess.Popen(
        [sys.executable, "-m", "panto", "decode", str(f)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    p.wait(timeout=60)
    assert b"Traceback" not in err

"""Start-up work ``panto -p`` avoids without changing behaviour: the argv
fast path (argparse only for what it does not read), ``panto.logs``
(``logging`` imported when a record can be emitted) and timestamps without
``datetime``."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from panto.cli import chat
from panto.conversation import Text
from panto.testing import Reply, ScriptedServer

# -- argv: the fast path gives what argparse gives -----------------------------------

FAST = [
    [],
    ["-p", "hi"],
    ["--print", "fix the test"],
    ["-p", "-"],
    ["-p", ""],
    ["-p", "  "],
    ["-p", "a=b --model x"],
    ["-p", "one", "-p", "two"],
    ["-p", "hi", "--model", "anthropic/claude-sonnet-4-5", "--output-format", "json"],
    ["--output-format", "stream-json", "-p", "hi", "--no-session", "--debug"],
    ["--model", "mock/anthropic", "--base-url", "http://127.0.0.1:1", "-p", "x"],
    ["-p", "x", "--max-turns", "3", "--max-tokens", "+100", "--thinking-budget", "1_000"],
    ["-p", "x", "--max-turns", "0"],
    ["-p", "x", "--system-prompt", "be terse", "--append-system-prompt", "more"],
    ["-p", "x", "--reasoning-effort", "low", "--no-extensions"],
    ["-p", "x", "--deny", "std.bash", "--deny", "std.*"],
    ["--continue", "-p", "x", "--at", "abc"],
    ["--fork", "abcd:ef", "-p", "x"],
    ["--output-format", "json"],
    ["--continue"],
]

#: argparse's business: help, errors, and the forms the fast path leaves to it
SLOW = [
    ["-h"],
    ["--help"],
    ["-p"],
    ["-p", "hi", "--model"],
    ["-p", "-x"],
    ["-p", "-1"],
    ["-p", "--model"],
    ["-phi"],
    ["-p=hi"],
    ["--print=hi"],
    ["--mod", "x", "-p", "hi"],
    ["-p", "hi", "extra"],
    ["--resume"],
    ["--resume", "abc", "-p", "hi"],
    ["-p", "hi", "--output-format", "yaml"],
    ["-p", "hi", "--max-turns", "three"],
    ["-p", "hi", "--max-turns", "-1"],
    ["-p", "hi", "--no-session=1"],
    ["--", "-p", "hi"],
    ["--version"],
    ["-p", "hi", "--bogus"],
    ["do X"],
    ["--model", "mock/anthropic", "fix", "the", "test"],
]


def _argparse(argv: list[str]) -> dict[str, Any]:
    return vars(chat.build_parser().parse_args(argv))


def test_the_fast_path_has_argparses_defaults() -> None:
    assert vars(chat.Args()) == _argparse([])


@pytest.mark.parametrize("argv", FAST, ids=lambda a: " ".join(a) or "(none)")
def test_the_fast_path_parses_like_argparse(argv: list[str]) -> None:
    fast = chat._fast_args(argv)
    assert fast is not None, argv
    assert vars(fast) == _argparse(argv)


@pytest.mark.parametrize("argv", SLOW, ids=lambda a: " ".join(a))
def test_anything_else_is_left_to_argparse(argv: list[str]) -> None:
    assert chat._fast_args(argv) is None


def _panto(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "panto", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        **kw,
    )


@pytest.mark.parametrize(
    "argv",
    [["-p"], ["-p", "hi", "--output-format", "yaml"], ["--bogus"], ["-p", "hi", "x", "--bogus"]],
)
def test_usage_errors_are_argparses(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "90")
    with pytest.raises(SystemExit) as exc:
        chat._fast_args(argv) or chat.build_parser().parse_args(argv)
    expected = capsys.readouterr().err
    r = _panto(*argv, env=dict(os.environ))
    assert r.returncode == exc.value.code == 2
    assert r.stderr == expected
    assert r.stderr.startswith("usage: panto")


def test_a_prompt_beside_print_is_one_clear_usage_error() -> None:
    """``panto -p fix the test`` (unquoted): -p takes "fix", and the rest
    would be the interactive mode's first prompt; one line says what to do."""
    r = _panto("-p", "fix", "the", "test", env=dict(os.environ))
    assert r.returncode == 2
    assert r.stderr == (
        "panto: -p takes the prompt as one argument; 'the test' is more: quote the whole "
        "prompt (-p 'fix the test'), or drop -p to start the interactive mode with it\n"
    )


def test_chat_help_is_argparses() -> None:
    r = _panto("chat", "--help", env=dict(os.environ, COLUMNS="100"))
    assert r.returncode == 0
    assert r.stdout.startswith("usage: panto [-h] [-p PROMPT]")
    assert "--output-format {text,json,stream-json}" in r.stdout


# -- panto -p with a session imports none of these ------------------------------------

_PROBE = """\
import builtins, gc, json, sys
compiled = []
_compile = builtins.compile
def counting(source, filename, *a, **k):
    if not str(filename).endswith(".py"):  # a module's source (a stale .pyc) is fine
        compiled.append(str(source)[:40])
    return _compile(source, filename, *a, **k)
builtins.compile = counting
from panto.cli import main
rc = main(sys.argv[1:])
mods = ("logging", "argparse", "gettext", "locale", "datetime", "base64", "queue",
        "ipaddress")
render = sys.modules["panto.cli.render"]
lazy = [n for n in ("_HEADING", "_INLINE", "_HUNK") if getattr(render, n)._compiled is None]
print(json.dumps({"rc": rc, "loaded": [m for m in mods if m in sys.modules],
                  "compiled": compiled, "gc": gc.isenabled(), "lazy": lazy}), file=sys.stderr)
"""


def test_panto_p_recording_a_session_imports_no_logging_argparse_or_datetime(
    tmp_path: Path,
) -> None:
    cwd = tmp_path / "repo"
    (cwd / ".git").mkdir(parents=True)
    env = dict(os.environ)
    with ScriptedServer() as server:
        server.push(Reply([Text("one")]), Reply([Text("two")]))
        env.update(
            PANTO_MODEL="anthropic/m",
            PANTO_BASE_URL=server.url,
            ANTHROPIC_API_KEY="sk-test-startup",
            PANTO_MAX_RETRIES="0",
        )
        for want in ("one", "two"):  # the second: the start-up caches filled
            r = subprocess.run(
                [sys.executable, "-c", _PROBE, "-p", "hi", "--output-format", "json"],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            out = json.loads([ln for ln in r.stderr.splitlines() if ln.startswith('{"rc"')][-1])
            assert out["rc"] == 0, r.stderr
            assert json.loads(r.stdout)["result"] == want
        assert out["loaded"] == [], out["loaded"]
        # no compile() at all (the first one of a process costs ~3 ms: typing's
        # ForwardRef of a string annotation, a dataclass method not cached...)
        assert out["compiled"] == [], out["compiled"]
        assert out["gc"] is True  # the collector paused while starting runs again
        # the text renderer's markdown patterns are never compiled for json output
        assert out["lazy"] == ["_HEADING", "_INLINE", "_HUNK"]
    # the session was recorded, with its timestamps (sessions.base.now)
    files = list(Path(env["XDG_DATA_HOME"]).rglob("*.jsonl"))
    assert len(files) == 2
    head = json.loads(files[0].read_text().splitlines()[0])
    assert head["type"] == "session"
    created = datetime.strptime(head["created"], "%Y-%m-%dT%H:%M:%S.%f%z")
    assert abs((datetime.now(timezone.utc) - created).total_seconds()) < 120
    assert files[0].name.startswith(head["created"].replace(":", "-").replace(".", "-"))


# -- timestamps without datetime -------------------------------------------------------


@pytest.mark.parametrize(
    "t_ns", [0, 1_764_806_701_123_456_789, 1_764_806_701_999_999_999, 951_782_400_000_000_000]
)
def test_now_is_datetimes_iso_format_in_milliseconds(t_ns: int) -> None:
    from panto.sessions.base import now

    dt = datetime.fromtimestamp(t_ns // 1000 / 1e6, timezone.utc).replace(
        microsecond=(t_ns // 1000) % 1_000_000
    )
    expected = dt.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert now(t_ns) == expected


def test_todays_date_in_the_prompt_is_the_local_date() -> None:
    import datetime as dt

    from panto.system_prompt import base_prompt

    text = base_prompt([], cwd="/x")
    assert f"Today's date: {dt.date.today().isoformat()}" in text


# -- panto.logs ----------------------------------------------------------------------


def test_a_logs_record_is_the_real_loggers_naming_its_caller(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from panto.logs import get_logger

    log = get_logger("panto.test")
    with caplog.at_level(logging.DEBUG, logger="panto"):
        log.debug("d %s", 1)
        log.info("i")
        log.warning("w")
        log.log(logging.ERROR, "e")
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("x")
        assert log.isEnabledFor(logging.DEBUG)
        assert log.getEffectiveLevel() == logging.DEBUG  # anything else: the real logger's
    recs = [(r.name, r.levelname, r.getMessage(), r.funcName) for r in caplog.records]
    fn = "test_a_logs_record_is_the_real_loggers_naming_its_caller"
    assert recs == [
        ("panto.test", "DEBUG", "d 1", fn),
        ("panto.test", "INFO", "i", fn),
        ("panto.test", "WARNING", "w", fn),
        ("panto.test", "ERROR", "e", fn),
        ("panto.test", "ERROR", "x", fn),
    ]
    assert caplog.records[0].filename == "test_startup_cli.py"
    assert caplog.records[-1].exc_info is not None
    assert log.logger is logging.getLogger("panto.test")


_LOGS_PROBE = """\
import sys
from panto.logs import get_logger
from panto.providers.transport import register_secrets
register_secrets(["sk-secret-key-1234"])
log = get_logger("panto.probe")
log.debug("debug %s", "sk-secret-key-1234")
log.info("info")
assert "logging" not in sys.modules, "a dropped record imported logging"
assert not log.isEnabledFor(20) and log.isEnabledFor(30)
log.warning("key %s", "sk-secret-key-1234")
assert "logging" in sys.modules
import logging
logging.getLogger("panto.other").error("direct %s", "sk-secret-key-1234")
"""


def test_logging_is_imported_by_the_first_record_that_can_be_emitted_redacted() -> None:
    r = subprocess.run(
        [sys.executable, "-c", _LOGS_PROBE], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    # Python's last-resort handler printed the warnings, the key scrubbed
    # (transport's redaction installed before the first record)
    assert r.stderr.splitlines() == ["key ***", "direct ***"], r.stderr


# -- urllib.parse deferred (startup_cache.defer_urllib_parse_import) -------------------

_URL_PROBE = """\
import json, sys
from panto.startup_cache import defer_urllib_parse_import
assert defer_urllib_parse_import()
assert not defer_urllib_parse_import()  # once
import pathlib
from pathlib import Path
early = [m for m in ("ipaddress",) if m in sys.modules]
stand_in = type(sys.modules["urllib.parse"]).__name__
uri = Path("/tmp/a b/\u00e9").as_uri()  # pathlib's quote_from_bytes: the real one runs
import urllib.parse
from urllib.parse import urlsplit
host = urlsplit("https://u@example.com:8/p").hostname
also = urllib.parse.quote("a b")
print(json.dumps([early, stand_in, uri, host, also, type(sys.modules["urllib.parse"]).__name__,
                  sys.modules["urllib.parse"] is urllib.parse, "ipaddress" in sys.modules]))
"""


def test_deferred_urllib_parse_is_the_real_module_on_first_use() -> None:
    r = subprocess.run(
        [sys.executable, "-c", _URL_PROBE], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    early, stand_in, uri, host, also, kind, same, ip = json.loads(r.stdout)
    assert early == [] and stand_in == "_Deferred"  # nothing imported until used
    assert uri == "file:///tmp/a%20b/%C3%A9"
    assert host == "example.com" and also == "a%20b"
    assert kind == "module" and same and ip  # the real one now, in sys.modules and urllib


def test_the_caches_off_defer_nothing() -> None:
    code = (
        "import sys\n"
        "from panto.startup_cache import defer_urllib_parse_import, defer_inspect_import\n"
        "print(defer_urllib_parse_import(), defer_inspect_import())\n"
    )
    env = dict(os.environ, PANTO_STARTUP_CACHE="0")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert r.stdout.split() == ["False", "False"], r.stderr


# -- the garbage collector paused while starting (startup_cache.pause_gc) ---------------

_GC_PROBE = """\
import gc, json
from panto.startup_cache import pause_gc, resume_gc
out = [pause_gc(), gc.isenabled(), pause_gc()]
keep = [[i] for i in range(5000)]  # tracked objects created while paused
resume_gc()
out += [gc.isenabled(), len(gc.get_objects(0)) < 1000, sum(1 for o in gc.get_objects(2) if o is keep)]
resume_gc()  # once
gc.disable()
out += [pause_gc(), gc.isenabled()]
resume_gc()
out.append(gc.isenabled())  # off before: stays off
print(json.dumps(out))
"""


def test_pause_gc_defers_collections_to_the_oldest_generation() -> None:
    r = subprocess.run(
        [sys.executable, "-c", _GC_PROBE], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [True, False, False, True, True, 1, False, False, False]


# -- panto.patterns ----------------------------------------------------------------------


def test_a_lazy_pattern_compiles_at_first_use_and_is_the_compiled_ones() -> None:
    import re

    from panto.patterns import LazyPattern

    p = LazyPattern(r"^(#{1,6})\s+(.*)$", re.M)
    assert p._compiled is None
    assert p.pattern == r"^(#{1,6})\s+(.*)$" and p.flags == re.M
    m = p.search("x\n## Title")
    assert m is not None and m.groups() == ("##", "Title")
    assert p._compiled is re.compile(r"^(#{1,6})\s+(.*)$", re.M)
    assert p.sub("-", "# a\n# b") == "-\n-"
    assert p.groups == 2 and p.fullmatch("# a") is not None

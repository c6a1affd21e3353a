"""The fault suite through the library: ``panto.Agent`` (sync ``run()`` and
``run_async()``) in a subprocess, configured only by ``panto.Config.load()``
from the same environment as the CLI, with every logger at DEBUG to stderr
(root handler: records of child loggers such as ``panto.agent`` reach it
without passing the ``panto`` logger's filters)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import fault_server as S
from support.faults import (
    IDLE,
    STARTUP_MARGIN,
    WATCHDOGS,
    find_leaks,
    marker_of,
    new_key,
    panto_env,
    run_library,
)

modes = pytest.mark.parametrize("mode", ["sync", "async"])
wires = pytest.mark.parametrize("wire", S.WIRES, ids=["anthropic", "openai"])


def lib_case(servers, home: Path, script, wire: str, mode: str, *, budget: float, env=None):  # type: ignore[no-untyped-def]
    srv = servers(script)
    key = new_key(wire)
    e = panto_env(home, wire, srv.base_url(wire), key, {**WATCHDOGS, **(env or {})})
    deadline = budget + STARTUP_MARGIN
    r, out = run_library(mode, e, home, deadline=deadline)
    assert r.ended_by_itself, (
        f"the library turn did not end by itself within {deadline:.0f}s: killed ({r.killed})\n"
        + r.describe()
    )
    assert out is not None, r.describe()
    assert "Traceback" not in r.stderr, r.describe()
    return r, out, srv, key


@wires
@modes
def test_library_ok(servers, home: Path, wire: str, mode: str) -> None:
    r, out, srv, key = lib_case(servers, home, S.ok, wire, mode, budget=2)
    assert out["error"] is None, r.describe()
    assert out["text"] == S.ANSWER
    assert out["events"][-1] == "MessageComplete"
    assert not find_leaks(marker_of(key), r, home)


@wires
@modes
def test_library_d2_pings_after_terminal(servers, home: Path, wire: str, mode: str) -> None:
    r, out, _, _ = lib_case(
        servers,
        home,
        S.stall_after_terminal_pings,
        wire,
        mode,
        budget=3,
        env={"PANTO_IDLE_TIMEOUT": "60", "PANTO_FIRST_BYTE_TIMEOUT": "60"},
    )
    assert out["error"] is None, r.describe()
    assert out["text"] == S.ANSWER
    assert out["events"][-1] == "MessageComplete"


@wires
@modes
def test_library_d8_trickle(servers, home: Path, wire: str, mode: str) -> None:
    idle = 3.0
    r, out, _, _ = lib_case(
        servers,
        home,
        S.trickle,
        wire,
        mode,
        budget=idle + 2,
        env={"PANTO_IDLE_TIMEOUT": str(idle)},
    )
    assert out["error"], r.describe()
    assert IDLE < idle


@wires
@modes
def test_library_d6_gzip(servers, home: Path, wire: str, mode: str) -> None:
    r, out, _, _ = lib_case(servers, home, S.gzip_sse, wire, mode, budget=2)
    assert out["error"] is None, r.describe()
    assert out["text"] == S.ANSWER


@wires
@modes
def test_library_d12_json_error_200(servers, home: Path, wire: str, mode: str) -> None:
    r, out, srv, _ = lib_case(
        servers, home, S.json_error_200_plain, wire, mode, budget=3, env={"PANTO_MAX_RETRIES": "2"}
    )
    assert out["error_type"] == "ProviderError", r.describe()
    assert "model not found: fault-model" in out["error"]
    assert len(srv.posts) == 1


@wires
@modes
def test_library_d1_stream_error_echo(servers, home: Path, wire: str, mode: str) -> None:
    r, out, _, key = lib_case(servers, home, S.echo_stream_error_late, wire, mode, budget=2)
    assert out["error"], r.describe()
    assert out["text"] == "The an"
    leaks = find_leaks(marker_of(key), r, home)
    assert not leaks, leaks


#: every behaviour that echoes the key somewhere
ECHOES = [name for name in S.BEHAVIOURS if "echo" in name] + [
    "json_error_200",
    "retry_after_3600",
    "huge_401",
]


@wires
@pytest.mark.parametrize("behaviour", ECHOES)
def test_library_secrets(servers, home: Path, wire: str, behaviour: str) -> None:  # type: ignore[no-untyped-def]
    """The key echoed back is in no exception text, message, or log record
    of any logger (the driver logs everything at DEBUG to stderr)."""
    r, out, _, key = lib_case(
        servers,
        home,
        S.BEHAVIOURS[behaviour],
        wire,
        "sync",
        budget=4,
        env={"PANTO_MAX_RETRIES": "1"},
    )
    leaks = find_leaks(marker_of(key), r, home)
    assert not leaks, leaks

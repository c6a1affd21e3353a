"""The fault suite (issue 12): the real ``panto -p`` against scripted server
faults, on both wires.  Each case asserts the exit status, the output, the
session file, and that panto ended *by itself* within its configured
watchdog plus ``STARTUP_MARGIN`` (else the harness kills it and the case
fails); the huge-body cases also assert peak RSS.

Watchdogs are set through the environment (``PANTO_FIRST_BYTE_TIMEOUT``,
``PANTO_IDLE_TIMEOUT``, ``PANTO_RETRY_WAIT_MAX``); ``PANTO_READ_TIMEOUT``
stays at its default, so a case passes only when the watchdog fires.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
from support import fault_server as S
from support.faults import (
    FIRST_BYTE,
    IDLE,
    RETRY_WAIT_MAX,
    RSS_BOUND_MB,
    RSS_KILL_MB,
    STARTUP_MARGIN,
    WATCHDOGS,
    find_leaks,
    marker_of,
    message_text,
    new_key,
    panto_env,
    run_panto,
    session_messages,
    start_panto,
)

wires = pytest.mark.parametrize("wire", S.WIRES, ids=["anthropic", "openai"])

TIMEOUT_WORDS = re.compile(r"time|stall|first byte|idle|no (response|progress)|silen", re.I)


def run_case(
    servers,  # type: ignore[no-untyped-def]
    home: Path,
    script,  # type: ignore[no-untyped-def]
    wire: str,
    *,
    budget: float,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    rss_limit_mb: float | None = None,
):  # type: ignore[no-untyped-def]
    """Run ``panto -p hello`` against ``script``; asserts that it ended by
    itself within ``budget`` (the watchdogs it should take) + the margin,
    and that the key leaked nowhere.  Returns (result, server)."""
    srv = servers(script)
    key = new_key(wire)
    e = panto_env(home, wire, srv.base_url(wire), key, {**WATCHDOGS, **(env or {})})
    deadline = budget + STARTUP_MARGIN
    r = run_panto(["-p", "hello", *args], e, home, deadline=deadline, rss_limit_mb=rss_limit_mb)
    assert r.ended_by_itself, (
        f"panto did not end by itself within {deadline:.0f}s "
        f"(watchdogs {budget:g}s + margin {STARTUP_MARGIN:g}s): killed ({r.killed})\n"
        + r.describe()
    )
    assert not find_leaks(marker_of(key), r, home), r.describe()
    assert "Traceback" not in r.stderr, r.describe()
    return r, srv


def assistant_messages(home: Path) -> list[dict]:  # type: ignore[type-arg]
    return [m for m in session_messages(home) if m["role"] == "assistant"]


def assert_user_prompt_saved(home: Path) -> None:
    msgs = [m for m in session_messages(home) if m["role"] != "system"]
    assert msgs and msgs[0]["role"] == "user" and message_text(msgs[0]) == "hello", msgs


# -- baseline --------------------------------------------------------------------------


@wires
def test_ok_baseline(servers, home: Path, wire: str) -> None:
    r, srv = run_case(servers, home, S.ok, wire, budget=2)
    assert r.returncode == 0, r.describe()
    assert r.stdout.strip() == S.ANSWER
    (a,) = assistant_messages(home)
    assert message_text(a) == S.ANSWER and a.get("error") is None
    assert a["stop_reason"] == "stop"
    assert len(srv.posts) == 1


# -- D2: the turn is complete at the terminal event ---------------------------------------


@wires
@pytest.mark.parametrize(
    "behaviour",
    [S.stall_after_terminal, S.stall_after_terminal_pings],
    ids=["silent", "pings"],
)
def test_d2_stall_after_terminal_event(servers, home: Path, wire: str, behaviour) -> None:  # type: ignore[no-untyped-def]
    # the watchdogs are long here: the answer must end at the terminal event,
    # not when a watchdog fires
    r, _ = run_case(
        servers,
        home,
        behaviour,
        wire,
        budget=3,
        env={"PANTO_IDLE_TIMEOUT": "60", "PANTO_FIRST_BYTE_TIMEOUT": "60"},
    )
    assert r.returncode == 0, r.describe()
    assert r.stdout.strip() == S.ANSWER
    (a,) = assistant_messages(home)
    assert message_text(a) == S.ANSWER
    assert a["stop_reason"] == "stop" and a.get("error") is None, a


# -- D8: watchdogs -----------------------------------------------------------------------


@wires
@pytest.mark.parametrize(
    "behaviour",
    [S.stall_before_headers, S.stall_after_headers, S.stall_after_headers_pings],
    ids=["before_headers", "after_headers", "after_headers_pings"],
)
def test_d8_stall_before_first_byte(servers, home: Path, wire: str, behaviour) -> None:  # type: ignore[no-untyped-def]
    r, srv = run_case(servers, home, behaviour, wire, budget=max(FIRST_BYTE, IDLE))
    assert r.returncode == 1, r.describe()
    assert TIMEOUT_WORDS.search(r.stderr), r.describe()
    assert r.stdout.strip() == ""
    assert_user_prompt_saved(home)
    assert not any(message_text(a) for a in assistant_messages(home))
    assert len(srv.posts) == 1


@wires
def test_d8_stall_retried_shows_provider_retry(servers, home: Path, wire: str) -> None:
    """A stall before any content is retried; stream-json shows each retry."""
    r, srv = run_case(
        servers,
        home,
        S.stall_before_headers,
        wire,
        budget=3 * FIRST_BYTE + 2 * RETRY_WAIT_MAX,
        env={"PANTO_MAX_RETRIES": "2"},
        args=("--output-format", "stream-json"),
    )
    assert r.returncode == 1, r.describe()
    lines = r.json_lines()
    retries = [d for d in lines if "retry" in d.get("type", "") or "stall" in d.get("type", "")]
    assert len(retries) >= 2, r.describe()
    assert lines and lines[-1]["type"] == "error", r.describe()
    assert len(srv.posts) == 3


@wires
@pytest.mark.parametrize(
    "behaviour", [S.stall_mid_event, S.stall_mid_stream_pings], ids=["silent", "pings"]
)
def test_d8_stall_mid_stream(servers, home: Path, wire: str, behaviour) -> None:  # type: ignore[no-untyped-def]
    r, _ = run_case(servers, home, behaviour, wire, budget=IDLE)
    assert r.returncode == 1, r.describe()
    assert r.stdout.startswith("The an"), r.describe()
    assert TIMEOUT_WORDS.search(r.stderr), r.describe()
    assert_user_prompt_saved(home)
    (a,) = assistant_messages(home)
    assert message_text(a) == "The an"  # what streamed is kept
    assert a["stop_reason"] == "error" and a.get("error"), a


@wires
def test_d8_keepalive_trickle(servers, home: Path, wire: str) -> None:
    idle = 3.0  # > the trickle's 2 s: only an idle watchdog that ignores comments fires
    r, _ = run_case(
        servers, home, S.trickle, wire, budget=idle + 2, env={"PANTO_IDLE_TIMEOUT": str(idle)}
    )
    assert r.returncode == 1, r.describe()
    assert TIMEOUT_WORDS.search(r.stderr), r.describe()
    assert_user_prompt_saved(home)


@wires
def test_d8_retry_after_capped(servers, home: Path, wire: str) -> None:
    r, srv = run_case(
        servers,
        home,
        [S.retry_after_3600, S.ok],
        wire,
        budget=RETRY_WAIT_MAX + 2,
        env={"PANTO_MAX_RETRIES": "1"},
    )
    # either the wait is capped (then the retry answers) or panto gives up
    # at once saying why; never a long wait
    if r.returncode == 0:
        assert r.stdout.strip() == S.ANSWER
        assert len(srv.posts) == 2
    else:
        assert r.returncode == 1, r.describe()
        assert re.search(r"429|rate|retry", r.stderr, re.I), r.describe()


# -- D6: gzip ----------------------------------------------------------------------------


@wires
def test_d6_gzip_response(servers, home: Path, wire: str) -> None:
    r, srv = run_case(servers, home, S.gzip_sse, wire, budget=2)
    assert r.returncode == 0, r.describe()
    assert r.stdout.strip() == S.ANSWER
    (a,) = assistant_messages(home)
    assert message_text(a) == S.ANSWER and a["stop_reason"] == "stop"


@wires
def test_gzip_declined_is_identity(servers, home: Path, wire: str) -> None:
    """Whatever panto advertises, an identity body works (the other half of D6)."""

    def identity(conn: S.Conn, req: S.Request) -> None:
        req.headers["accept-encoding"] = "identity"
        S.gzip_sse(conn, req)

    r, _ = run_case(servers, home, identity, wire, budget=2)
    assert r.returncode == 0, r.describe()
    assert r.stdout.strip() == S.ANSWER


# -- D3: error bodies are read up to a bound ---------------------------------------------------


@wires
def test_d3_huge_error_body(servers, home: Path, wire: str) -> None:
    r, srv = run_case(servers, home, S.huge_error(401), wire, budget=3, rss_limit_mb=RSS_KILL_MB)
    assert r.peak_rss_kb < RSS_BOUND_MB * 1024, r.describe()
    assert r.returncode == 1, r.describe()
    assert "401" in r.stderr, r.describe()
    assert len(r.stderr) < 16384, "the error message quotes a bounded prefix of the body"
    assert len(srv.posts) == 1
    assert_user_prompt_saved(home)


@wires
def test_d3_huge_error_body_retried(servers, home: Path, wire: str) -> None:
    r, srv = run_case(
        servers,
        home,
        S.huge_error(503, chunked=True),
        wire,
        budget=6,
        env={"PANTO_MAX_RETRIES": "2"},
        rss_limit_mb=RSS_KILL_MB,
    )
    assert r.peak_rss_kb < RSS_BOUND_MB * 1024, r.describe()
    assert r.returncode == 1, r.describe()
    assert "503" in r.stderr, r.describe()
    assert len(srv.posts) == 3


# -- D12: a JSON error in a 200 ----------------------------------------------------------


@wires
def test_d12_json_error_in_200(servers, home: Path, wire: str) -> None:
    r, srv = run_case(
        servers, home, S.json_error_200_plain, wire, budget=3, env={"PANTO_MAX_RETRIES": "2"}
    )
    assert r.returncode == 1, r.describe()
    assert "model not found: fault-model" in r.stderr, r.describe()
    assert not re.search(r"ended before|truncat|unterminated", r.stderr), r.describe()
    assert len(srv.posts) == 1, "the provider's own error is not retried"
    assert_user_prompt_saved(home)


# -- resets (already handled: pinned so they stay so) ---------------------------------------


@wires
def test_reset_before_headers_is_retried(servers, home: Path, wire: str) -> None:
    r, srv = run_case(
        servers,
        home,
        [S.reset_before_headers, S.ok],
        wire,
        budget=2,
        env={"PANTO_MAX_RETRIES": "1"},
    )
    assert r.returncode == 0, r.describe()
    assert r.stdout.strip() == S.ANSWER
    assert len(srv.posts) == 2


@wires
def test_reset_mid_stream_keeps_partial(servers, home: Path, wire: str) -> None:
    r, srv = run_case(servers, home, S.reset_mid_stream, wire, budget=2)
    assert r.returncode == 1, r.describe()
    assert r.stdout.startswith("The an")
    assert re.search(r"connection|reset|closed", r.stderr, re.I), r.describe()
    (a,) = assistant_messages(home)
    assert message_text(a) == "The an" and a["stop_reason"] == "error" and a["error"]
    assert len(srv.posts) == 1  # content had streamed: not retried


# -- a 1 GiB line in a 200 (the decoder's limits bound memory) --------------------------------


@wires
def test_huge_line_in_200_is_bounded(servers, home: Path, wire: str) -> None:
    r, srv = run_case(servers, home, S.huge_line_200, wire, budget=5, rss_limit_mb=RSS_KILL_MB)
    assert r.peak_rss_kb < RSS_BOUND_MB * 1024, r.describe()
    assert r.returncode == 1, r.describe()
    assert re.search(r"too long|limit|line", r.stderr, re.I), r.describe()
    assert len(r.stderr) < 16384, r.describe()
    assert_user_prompt_saved(home)


# -- signals while a response streams ----------------------------------------------------------


@pytest.mark.parametrize(
    ("sig", "status"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
    ids=["SIGINT", "SIGTERM", "SIGHUP"],
)
def test_signal_during_stream(servers, home: Path, sig: int, status: int) -> None:  # type: ignore[no-untyped-def]
    """Ctrl-C, SIGTERM and SIGHUP while a response is stalled mid-stream:
    panto ends at once with 128+N, and what streamed is persisted."""
    wire = S.ANTHROPIC
    srv = servers(S.stall_mid_event)
    key = new_key(wire)
    env = panto_env(
        home,
        wire,
        srv.base_url(wire),
        key,
        {**WATCHDOGS, "PANTO_IDLE_TIMEOUT": "120", "PANTO_FIRST_BYTE_TIMEOUT": "120"},
    )
    run = start_panto(["-p", "hello"], env, home)
    try:
        deadline = time.monotonic() + 10 + STARTUP_MARGIN
        while "The an" not in run.out_path.read_text(errors="replace"):
            assert time.monotonic() < deadline and not run.poll(), "the stream did not start"
            time.sleep(0.05)
        sent = time.monotonic()
        if sig == signal.SIGINT:
            os.killpg(run.pid, sig)  # as the terminal does
        else:
            run.signal(sig)
        r = run.wait(10 + STARTUP_MARGIN)
    finally:
        if run.status is None:
            run.kill("deadline")
    assert r.ended_by_itself, r.describe()
    assert run.ended_at is not None and run.ended_at - sent < 5, r.describe()
    assert r.returncode == status, r.describe()
    assert "Traceback" not in r.stderr, r.describe()
    assert not find_leaks(marker_of(key), r, home)
    assert_user_prompt_saved(home)
    (a,) = assistant_messages(home)
    assert message_text(a) == "The an", a  # what streamed is kept
    assert a["stop_reason"] == "error" and a.get("error"), a

"""The agent as an endpoint (``/v1/agent/sessions...``) of a real
``panto serve``, driving the offline mock model and the real std tools."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.serve import create_session as create
from support.serve import read_events, start_serve, stop

from panto.serve.settings import hash_key

A = {"authorization": "Bearer key-a"}
B = {"x-api-key": "key-b"}


@pytest.fixture
def server(isolated_home: Path, tmp_path: Path) -> Iterator[str]:
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(
        f'[serve.keys.a]\nsha256 = "{hash_key("key-a")}"\n[serve.keys.b]\nsha256 = "{hash_key("key-b")}"\n'
    )
    proc, url, _ = start_serve({**os.environ, "PANTO_STARTUP_CACHE": "0"}, tmp_path)
    try:
        yield url
    finally:
        stop(proc)


def test_prompt_events_messages_and_replay(server: str, tmp_path: Path) -> None:
    sid = create(server, A, tmp_path)
    r = httpx.post(
        f"{server}/v1/agent/sessions/{sid}/prompts",
        json={"text": "call bash echo served-hello"},
        headers=A,
    )
    assert r.status_code == 202
    events = read_events(server, sid, A, "turn.completed")
    names = [e["event"] for e in events]
    assert names[0] == "turn.started" and names[-1] == "turn.completed"
    assert "tool_call_start" in names and "tool_result" in names and "content_delta" in names
    ids = [e["id"] for e in events]
    assert ids == list(range(1, len(ids) + 1))
    result = next(e for e in events if e["event"] == "tool_result")["data"]
    assert "served-hello" in result["content"]
    msgs = httpx.get(f"{server}/v1/agent/sessions/{sid}/messages", headers=A).json()["data"]
    tool_results = [b for m in msgs for b in m["content"] if b.get("type") == "tool_result"]
    assert (
        tool_results and "served-hello" in str(tool_results[0]) and tool_results[0]["tool_use_id"]
    )
    # replay after a reconnect: exactly the events after the last one seen
    again = read_events(server, sid, A, "turn.completed", after=ids[2])
    assert [e["id"] for e in again] == ids[3:]
    q = httpx.get(f"{server}/v1/agent/sessions/{sid}", headers=A).json()
    assert q["state"] == "idle" and q["last_event_id"] == ids[-1]


def test_busy_session_rejects_or_queues(server: str, tmp_path: Path) -> None:
    sid = create(server, A, tmp_path)
    base = f"{server}/v1/agent/sessions/{sid}"
    assert (
        httpx.post(base + "/prompts", json={"text": "call bash sleep 2"}, headers=A).status_code
        == 202
    )
    time.sleep(0.3)
    r = httpx.post(base + "/prompts", json={"text": "hello", "mode": "reject"}, headers=A)
    assert r.status_code == 409 and "running turn 1" in r.json()["error"]["message"]
    r = httpx.post(base + "/prompts", json={"text": "after you", "mode": "follow_up"}, headers=A)
    assert r.status_code == 202 and r.json()["queued"] is True
    events = read_events(server, sid, A, "turn.completed", count=2)
    assert [e["data"]["turn"] for e in events if e["event"] == "turn.completed"] == [1, 2]
    msgs = httpx.get(base + "/messages", headers=A).json()["data"]
    users = [m for m in msgs if m["role"] == "user"]
    assert "after you" in json.dumps(users[-1])
    # every tool call has exactly one result
    calls = [b["id"] for m in msgs for b in m["content"] if b.get("type") == "tool_use"]
    results = [
        b["tool_use_id"] for m in msgs for b in m["content"] if b.get("type") == "tool_result"
    ]
    assert sorted(calls) == sorted(results) and len(set(results)) == len(results)


def test_abort_ends_the_turn_and_kills_the_tool(server: str, tmp_path: Path) -> None:
    sid = create(server, A, tmp_path)
    base = f"{server}/v1/agent/sessions/{sid}"
    marker = tmp_path / "still-running"
    httpx.post(base + "/prompts", json={"text": f"call bash sleep 30; touch {marker}"}, headers=A)
    got: list[list[dict[str, Any]]] = []
    t = threading.Thread(target=lambda: got.append(read_events(server, sid, A, "turn.aborted")))
    t.start()
    time.sleep(1.0)
    t0 = time.monotonic()
    assert httpx.post(base + "/abort", headers=A, timeout=30).status_code == 200
    t.join(20)
    assert got and got[0][-1]["event"] == "turn.aborted"
    assert time.monotonic() - t0 < 5
    assert httpx.get(base, headers=A).json()["state"] == "idle"
    time.sleep(0.5)
    assert not marker.exists()


def test_keys_see_only_their_sessions_and_fork(server: str, tmp_path: Path) -> None:
    sid = create(server, A, tmp_path)
    assert httpx.get(f"{server}/v1/agent/sessions/{sid}", headers=B).status_code == 404
    assert httpx.get(f"{server}/v1/agent/sessions", headers=B).json()["data"] == []
    assert httpx.get(f"{server}/v1/agent/sessions", headers={}).status_code == 401
    httpx.post(
        f"{server}/v1/agent/sessions/{sid}/prompts", json={"text": "remember this"}, headers=A
    )
    read_events(server, sid, A, "turn.completed")
    r = httpx.post(f"{server}/v1/agent/sessions/{sid}/fork", headers=A)
    assert r.status_code == 201
    fid = r.json()["id"]
    assert fid != sid
    a = httpx.get(f"{server}/v1/agent/sessions/{sid}/messages", headers=A).json()["data"]
    f = httpx.get(f"{server}/v1/agent/sessions/{fid}/messages", headers=A).json()["data"]
    assert [m["role"] for m in f] == [m["role"] for m in a] and "remember this" in json.dumps(f)
    ids = {s["id"] for s in httpx.get(f"{server}/v1/agent/sessions", headers=A).json()["data"]}
    assert ids == {sid, fid}


def test_approvals_as_events(server: str, tmp_path: Path) -> None:
    """With approvals on, a bash call is a permission.requested event: allow
    runs it, deny gives an error result, no answer within the timeout denies;
    every decision is an event and in the session."""
    r = httpx.post(
        f"{server}/v1/agent/sessions",
        json={
            "model": "mock/anthropic",
            "cwd": str(tmp_path),
            "approvals": True,
            "approval_timeout": 2,
        },
        headers=A,
    )
    assert r.status_code == 201 and r.json()["approvals"] is True
    sid = r.json()["id"]
    base = f"{server}/v1/agent/sessions/{sid}"
    last = 0
    outcomes = []
    rids: list[str] = []
    for answer, name in (("once", "allowed"), ("deny", "denied"), (None, "timeout")):
        marker = tmp_path / name
        httpx.post(base + "/prompts", json={"text": f"call bash touch {marker}"}, headers=A)
        got: list[list[dict[str, Any]]] = []
        t = threading.Thread(
            target=lambda got=got, after=last: got.append(
                read_events(server, sid, A, "turn.completed", after=after)
            )
        )
        t.start()
        deadline = time.monotonic() + 30
        pending: list[str] = []
        while not pending and time.monotonic() < deadline:
            pending = httpx.get(base, headers=A).json()["pending_permissions"]
            time.sleep(0.05)
        assert pending, "no permission request"
        if answer is not None:
            r = httpx.post(f"{base}/permissions/{pending[0]}", json={"decision": answer}, headers=A)
            assert r.status_code == 200
        t.join(30)
        events = got[0]
        last = events[-1]["id"]
        req = next(e for e in events if e["event"] == "permission.requested")["data"]
        assert req["tool"] == "bash" and str(marker) in req["detail"]
        res = next(e for e in events if e["event"] == "permission.resolved")["data"]
        result = next(e for e in events if e["event"] == "tool_result")["data"]
        outcomes.append((res["decision"], marker.exists(), result["is_error"]))
        rids.append(req["request"])
    assert outcomes == [("once", True, False), ("deny", False, True), ("deny", False, True)]
    # a second answer is a 409; an expired or unknown request a 404 naming it
    r = httpx.post(f"{base}/permissions/{rids[0]}", json={"decision": "deny"}, headers=A)
    assert r.status_code == 409 and "answered already" in r.text, r.text
    r = httpx.post(f"{base}/permissions/{rids[2]}", json={"decision": "once"}, headers=A)
    assert r.status_code == 404 and rids[2] in r.text and "expired" in r.text, r.text
    r = httpx.post(f"{base}/permissions/perm_99", json={"decision": "once"}, headers=A)
    assert r.status_code == 404 and "perm_99" in r.text
    fork = httpx.post(f"{base}/fork", headers=A)
    assert fork.status_code == 201 and fork.json()["approvals"] is True  # it asks too
    # an abort denies the waiting request, before the turn's end
    marker = tmp_path / "aborted"
    httpx.post(base + "/prompts", json={"text": f"call bash touch {marker}"}, headers=A)
    req = read_events(server, sid, A, "permission.requested", after=last)[-1]
    assert httpx.post(base + "/abort", headers=A, timeout=30).status_code == 200
    events = read_events(server, sid, A, "turn.aborted", after=req["id"])
    assert events[0]["event"] == "permission.resolved", events
    assert events[0]["data"] == {
        "request": req["data"]["request"],
        "decision": "deny",
        "why": "the turn was aborted",
    }
    r = httpx.post(
        f"{base}/permissions/{req['data']['request']}", json={"decision": "once"}, headers=A
    )
    assert r.status_code == 404 and "expired" in r.text, r.text
    assert not marker.exists()


def test_waiting_permission_requests_do_not_hold_up_other_sessions(
    server: str, tmp_path: Path
) -> None:
    """More requests waiting for an answer than the process's tool pool has
    threads: every one of them is asked, and a session without approvals
    still runs its tools at once."""
    from panto.tools import DEFAULT_TOOL_THREADS

    n = DEFAULT_TOOL_THREADS + 2
    sids = []
    for _ in range(n):
        r = httpx.post(
            f"{server}/v1/agent/sessions",
            json={"model": "mock/anthropic", "cwd": str(tmp_path), "approvals": True},
            headers=A,
        )
        sids.append(r.json()["id"])
    for sid in sids:
        r = httpx.post(
            f"{server}/v1/agent/sessions/{sid}/prompts",
            json={"text": f"call bash touch {tmp_path}/x"},
            headers=A,
        )
        assert r.status_code == 202
    deadline = time.monotonic() + 30
    waiting = 0
    while waiting < n:
        assert time.monotonic() < deadline, f"{waiting} of {n} requests asked"
        waiting = sum(
            len(
                httpx.get(f"{server}/v1/agent/sessions/{s}", headers=A).json()[
                    "pending_permissions"
                ]
            )
            for s in sids
        )
        time.sleep(0.2)
    plain = create(server, A, tmp_path)
    t0 = time.monotonic()
    httpx.post(
        f"{server}/v1/agent/sessions/{plain}/prompts",
        json={"text": "call bash echo not-held-up"},
        headers=A,
    )
    events = read_events(server, plain, A, "turn.completed", timeout=30)
    assert "not-held-up" in json.dumps(events)
    assert time.monotonic() - t0 < 5


def test_sigterm_ends_event_streams_once_their_turn_is_done(
    isolated_home: Path, tmp_path: Path
) -> None:
    """An open ``/events`` stream never ends by itself: on SIGTERM the one
    of an idle session ends at once and the one of a running turn after
    that turn, so the server exits well inside ``drain_timeout`` (not
    after it, with a cancelled task's traceback)."""
    import signal

    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text("[serve]\ndrain_timeout = 40\n")
    proc, url, err = start_serve({**os.environ, "PANTO_STARTUP_CACHE": "0"}, tmp_path)
    try:
        idle = create(url, {}, tmp_path)
        busy = create(url, {}, tmp_path)
        streams: dict[str, str] = {}

        def watch(sid: str) -> None:
            with httpx.stream("GET", f"{url}/v1/agent/sessions/{sid}/events", timeout=60) as r:
                streams[sid] = "".join(r.iter_text())

        r = httpx.post(
            f"{url}/v1/agent/sessions/{busy}/prompts",
            json={"text": "call bash sleep 2; echo finished-after-sigterm"},
        )
        assert r.status_code == 202
        threads = [threading.Thread(target=watch, args=(sid,)) for sid in (idle, busy)]
        for t in threads:
            t.start()
        time.sleep(0.7)
        assert httpx.get(f"{url}/v1/agent/sessions/{busy}").json()["state"] == "running"
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        took = time.monotonic() - start
        for t in threads:
            t.join(10)
        assert took < 15, f"SIGTERM took {took:.1f} s"
        assert streams[idle] == ""  # nothing happened in it; ended cleanly
        assert "finished-after-sigterm" in streams[busy]
        assert streams[busy].rstrip().split("\n")[-2] == "event: turn.completed"
        assert "Traceback" not in err.read_text()
    finally:
        stop(proc)


def test_a_replay_is_one_write_so_a_client_gone_mid_replay_is_no_log_noise(
    isolated_home: Path, tmp_path: Path
) -> None:
    """A watcher's replay is one write (one HTTP chunk), not one per event:
    a client gone mid-replay got one failed write and nothing in the log,
    where before each later event was a "socket.send() raised exception."
    line (the loop never ran between the writes to notice); the session
    goes on."""
    import socket

    proc, url, err = start_serve({**os.environ, "PANTO_STARTUP_CACHE": "0"}, tmp_path)
    try:
        sid = create(url, {}, tmp_path)
        for i in range(3):
            r = httpx.post(
                f"{url}/v1/agent/sessions/{sid}/prompts", json={"text": f"call bash echo {i}"}
            )
            assert r.status_code == 202
            read_events(url, sid, {}, "turn.completed", count=i + 1)
        last = httpx.get(f"{url}/v1/agent/sessions/{sid}").json()["last_event_id"]
        assert last > 40
        host, port = url.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port))) as c:
            c.sendall(f"GET /v1/agent/sessions/{sid}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            data = b""
            while f"id: {last}\n".encode() not in data:
                more = c.recv(65536)
                assert more, data
                data += more
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        head, _, body = data.partition(b"\r\n\r\n")
        assert b"transfer-encoding: chunked" in head.lower()
        chunks = 0
        while body and f"id: {last}\n".encode() in body:
            size, _, rest = body.partition(b"\r\n")
            body = rest[int(size, 16) + 2 :]
            chunks += 1
        assert chunks == 1, f"the replay of {last} events came in {chunks} writes"
        time.sleep(0.5)
        r = httpx.post(f"{url}/v1/agent/sessions/{sid}/prompts", json={"text": "still here"})
        assert r.status_code == 202
        read_events(url, sid, {}, "turn.completed", count=4)
        assert "socket.send() raised exception" not in err.read_text()
    finally:
        stop(proc)


def test_bad_session_fields_are_400s_naming_the_field(server: str, tmp_path: Path) -> None:
    """A model or cwd that is not a string was a 500 with a traceback in the
    log; a prompt without text now says it is missing."""
    for body, message in (
        ({"model": 5}, "model: expected a string (PROVIDER/MODEL), got 5"),
        ({"cwd": ["/tmp"]}, "cwd: expected a string (a directory's path), got ['/tmp']"),
    ):
        r = httpx.post(f"{server}/v1/agent/sessions", json=body, headers=A)
        assert r.status_code == 400 and r.json()["error"]["message"] == message, r.text
    sid = create(server, A, tmp_path)
    r = httpx.post(f"{server}/v1/agent/sessions/{sid}/prompts", json={"txt": "x"}, headers=A)
    assert r.status_code == 400
    assert r.json()["error"]["message"] == (
        'text: expected a string (the prompt), missing: {"text": "..."}'
    )


def test_serve_roots_bound_where_agent_sessions_may_work(
    isolated_home: Path, tmp_path: Path
) -> None:
    """``[serve] roots``: a session's cwd must be a root or under one
    (symlinks resolved, so a link inside a root cannot lead out); anything
    else, the server's own directory included, is a 403 naming the roots."""
    work = tmp_path / "work"
    (work / "proj").mkdir(parents=True)
    (work / "out").symlink_to(tmp_path)
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(f'[serve]\nroots = ["{work}"]\n[serve.keys.a]\nsha256 = "{hash_key("key-a")}"\n')
    proc, url, _ = start_serve({**os.environ, "PANTO_STARTUP_CACHE": "0"}, tmp_path)
    try:
        for cwd in (work, work / "proj"):
            r = httpx.post(
                f"{url}/v1/agent/sessions",
                json={"model": "mock/anthropic", "cwd": str(cwd)},
                headers=A,
            )
            assert r.status_code == 201, r.text
            assert r.json()["cwd"] == str(cwd)
        for body in (
            {"cwd": str(tmp_path)},
            {"cwd": str(work / "out")},  # a link out of the root
            {"cwd": str(work) + "-evil"},  # a sibling sharing the prefix
            {},  # the server's own directory (tmp_path): outside too
        ):
            r = httpx.post(
                f"{url}/v1/agent/sessions", json={"model": "mock/anthropic", **body}, headers=A
            )
            assert r.status_code == 403, (body, r.text)
            msg = r.json()["error"]["message"]
            assert "[serve] roots" in msg and str(work) in msg, msg
    finally:
        stop(proc)

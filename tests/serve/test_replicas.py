"""Replicas: several real ``panto serve`` processes sharing agent sessions
through one real PostgreSQL (a fresh database per test), with the offline
mock model and the real std tools; then the same behind a real HAProxy."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.serve import create_session, read_events, start_serve, stop

from panto.serve.settings import hash_key

# read now: the isolated_home fixture clears PANTO_* variables for each test
ADMIN_URL = os.environ.get("PANTO_TEST_POSTGRES_URL")

A = {"authorization": "Bearer key-a"}
B = {"x-api-key": "key-b"}


class Replicas:
    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env = env
        self.cwd = cwd
        self.procs: list[subprocess.Popen[str]] = []
        self.urls: list[str] = []

    def start(self) -> str:
        proc, url, _ = start_serve(self.env, self.cwd)
        self.procs.append(proc)
        self.urls.append(url)
        return url

    def close(self) -> None:
        for p in self.procs:
            stop(p)


@pytest.fixture
def replicas(isolated_home: Path, tmp_path: Path, database: str) -> Iterator[Replicas]:
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(
        f'[serve.keys.a]\nsha256 = "{hash_key("key-a")}"\n'
        f'[serve.keys.b]\nsha256 = "{hash_key("key-b")}"\n'
    )
    env = {**os.environ, "PANTO_STARTUP_CACHE": "0", "PANTO_SESSION_URL": database}
    r = Replicas(env, tmp_path)
    try:
        yield r
    finally:
        r.close()


def prompt(url: str, sid: str, text: str, mode: str = "follow_up") -> httpx.Response:
    return httpx.post(
        f"{url}/v1/agent/sessions/{sid}/prompts",
        json={"text": text, "mode": mode},
        headers=A,
        timeout=30,
    )


def state(url: str, sid: str) -> dict[str, Any]:
    r = httpx.get(f"{url}/v1/agent/sessions/{sid}", headers=A, timeout=10)
    assert r.status_code == 200, r.text
    return dict(r.json())


def messages(url: str, sid: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{url}/v1/agent/sessions/{sid}/messages", headers=A, timeout=10)
    assert r.status_code == 200, r.text
    return list(r.json()["data"])


def assert_every_call_answered(msgs: list[dict[str, Any]]) -> None:
    calls = [b["id"] for m in msgs for b in m["content"] if b.get("type") == "tool_use"]
    results = [
        b["tool_use_id"] for m in msgs for b in m["content"] if b.get("type") == "tool_result"
    ]
    assert calls and sorted(calls) == sorted(results) and len(set(results)) == len(results)


def watch(
    url: str, sid: str, until: str, count: int = 1, after: int | None = None
) -> tuple[threading.Thread, list[Any]]:
    got: list[Any] = []
    t = threading.Thread(target=lambda: got.append(read_events(url, sid, A, until, count, after)))
    t.start()
    return t, got


def test_a_session_created_on_a_is_prompted_on_b_and_watched_on_a(
    replicas: Replicas, tmp_path: Path
) -> None:
    a, b = replicas.start(), replicas.start()
    sid = create_session(a, A, tmp_path)
    # metadata in PostgreSQL: B answers for it; another key still sees nothing
    assert state(b, sid)["state"] == "idle"
    assert httpx.get(f"{b}/v1/agent/sessions/{sid}", headers=B).status_code == 404
    assert httpx.get(f"{b}/v1/agent/sessions", headers=B).json()["data"] == []
    assert [s["id"] for s in httpx.get(f"{b}/v1/agent/sessions", headers=A).json()["data"]] == [sid]

    t, got = watch(a, sid, "turn.completed")
    time.sleep(0.5)  # A's stream is open before the turn starts on B
    r = prompt(b, sid, "call bash echo replica-hello")
    assert r.status_code == 202 and r.json()["queued"] is False
    t.join(60)
    events = got[0]
    names = [e["event"] for e in events]
    assert names[0] == "turn.started" and names[-1] == "turn.completed"
    assert "content_delta" in names and "tool_result" in names
    ids = [e["id"] for e in events]
    assert ids == list(range(1, len(ids) + 1))  # gap-free, duplicate-free, in order
    result = next(e for e in events if e["event"] == "tool_result")["data"]
    assert "replica-hello" in result["content"]
    assert_every_call_answered(messages(a, sid))
    assert "replica-hello" in json.dumps(messages(a, sid))

    # a reconnect with Last-Event-ID, on either replica, replays exactly the rest
    for url in (a, b):
        again = read_events(url, sid, A, "turn.completed", after=ids[2])
        assert [e["id"] for e in again] == ids[3:]
        assert [e["data"] for e in again] == [e["data"] for e in events[3:]]
    assert state(a, sid)["last_event_id"] == ids[-1] == state(b, sid)["last_event_id"]

    # busy on B: reject on A is a 409 naming the turn; follow_up on A is queued
    # in PostgreSQL and B runs it after its turn
    assert prompt(b, sid, "call bash sleep 5").status_code == 202
    time.sleep(0.5)
    assert state(a, sid)["state"] == "running"
    t0 = time.monotonic()
    r = prompt(a, sid, "hello", mode="reject")
    assert r.status_code == 409 and "running turn 2" in r.json()["error"]["message"], r.text
    r = prompt(a, sid, "queued on A", mode="follow_up")
    assert r.status_code == 202 and r.json()["queued"] is True
    # (not after the store's wait for a writer killed a moment ago: 1 s)
    assert time.monotonic() - t0 < 1.0
    events = read_events(a, sid, A, "turn.completed", count=2, after=ids[-1])
    assert [e["data"]["turn"] for e in events if e["event"] == "turn.completed"] == [2, 3]
    msgs = messages(b, sid)
    assert "queued on A" in json.dumps([m for m in msgs if m["role"] == "user"][-1])
    assert_every_call_answered(msgs)


def test_a_steer_sent_to_another_replica_enters_the_running_turn(
    replicas: Replicas, tmp_path: Path
) -> None:
    a, b = replicas.start(), replicas.start()
    sid = create_session(a, A, tmp_path)
    assert prompt(a, sid, "call bash sleep 3").status_code == 202
    read_events(b, sid, A, "tool_call_start")
    r = prompt(b, sid, "steered from B", mode="steer")
    assert r.status_code == 202 and r.json()["queued"] is True
    events = read_events(b, sid, A, "turn.completed")
    assert [e["event"] for e in events].count("turn.started") == 1  # the same turn
    msgs = messages(b, sid)
    users = [i for i, m in enumerate(msgs) if "steered from B" in json.dumps(m)]
    results = [i for i, m in enumerate(msgs) if m["role"] == "tool"]
    assert users and results and users[0] > results[0]  # after the tool round's results
    assert_every_call_answered(msgs)


def test_two_replicas_racing_one_session_run_it_once(replicas: Replicas, tmp_path: Path) -> None:
    a, b = replicas.start(), replicas.start()
    for _ in range(3):
        sid = create_session(a, A, tmp_path)
        out: dict[str, int] = {}
        go = threading.Barrier(2)

        def send(url: str, sid: str, go: threading.Barrier, out: dict[str, int]) -> None:
            go.wait()
            out[url] = prompt(url, sid, "call bash sleep 3", mode="reject").status_code

        ts = [threading.Thread(target=send, args=(u, sid, go, out)) for u in (a, b)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        assert sorted(out.values()) == [202, 409], out
        events = read_events(a, sid, A, "turn.completed")
        assert [e["event"] for e in events].count("turn.started") == 1


def test_abort_and_fork_from_another_replica(replicas: Replicas, tmp_path: Path) -> None:
    a, b = replicas.start(), replicas.start()
    sid = create_session(a, A, tmp_path)
    marker = tmp_path / "still-running"
    assert prompt(a, sid, f"call bash sleep 30; touch {marker}").status_code == 202
    read_events(b, sid, A, "tool_call_start")
    time.sleep(0.5)
    t0 = time.monotonic()
    assert httpx.post(f"{b}/v1/agent/sessions/{sid}/abort", headers=A).status_code == 200
    events = read_events(b, sid, A, "turn.aborted")
    assert time.monotonic() - t0 < 5
    while state(b, sid)["state"] == "running":
        assert time.monotonic() - t0 < 5
        time.sleep(0.1)
    assert state(a, sid)["state"] == "idle" and events[-1]["event"] == "turn.aborted"
    time.sleep(0.5)
    assert not marker.exists()  # the tool's process was killed on A
    r = httpx.post(f"{b}/v1/agent/sessions/{sid}/fork", headers=A)
    assert r.status_code == 201, r.text
    fid = r.json()["id"]
    assert [m["role"] for m in messages(a, fid)] == [m["role"] for m in messages(b, sid)]
    assert "still-running" in json.dumps(messages(a, fid))
    ids = {s["id"] for s in httpx.get(f"{a}/v1/agent/sessions", headers=A).json()["data"]}
    assert ids == {sid, fid}


def test_sigkill_of_the_running_replica_leaves_the_session_usable(
    replicas: Replicas, tmp_path: Path
) -> None:
    a, b = replicas.start(), replicas.start()
    sid = create_session(b, A, tmp_path)
    assert prompt(a, sid, "call bash sleep 30").status_code == 202
    seen = read_events(b, sid, A, "tool_call_start")
    time.sleep(1.0)  # the tool is running on A
    assert state(b, sid)["state"] == "running"
    replicas.procs[0].send_signal(signal.SIGKILL)
    replicas.procs[0].wait(10)
    t0 = time.monotonic()
    while state(b, sid)["state"] == "running":
        assert time.monotonic() - t0 < 5, "the session stayed locked by a dead replica"
        time.sleep(0.1)
    assert state(b, sid)["state"] in ("idle", "interrupted")
    r = prompt(b, sid, "call bash echo after-the-kill")
    assert r.status_code == 202, r.text
    assert time.monotonic() - t0 < 5
    events = read_events(b, sid, A, "turn.completed", after=seen[-1]["id"])
    names = [e["event"] for e in events]
    # the dead replica's turn is closed first, then the new one runs
    assert names[0] == "turn.aborted" and names[1] == "turn.started"
    ids = [e["id"] for e in events]
    assert ids == list(range(ids[0], ids[0] + len(ids)))
    assert "after-the-kill" in json.dumps(messages(b, sid))
    assert_every_call_answered(messages(b, sid))  # the killed call got its "cancelled" result
    assert state(b, sid)["state"] == "idle"


def create_with_approvals(url: str, cwd: Path, timeout: float) -> str:
    r = httpx.post(
        f"{url}/v1/agent/sessions",
        json={
            "model": "mock/anthropic",
            "cwd": str(cwd),
            "approvals": True,
            "approval_timeout": timeout,
        },
        headers=A,
    )
    assert r.status_code == 201 and r.json()["approvals"] is True, r.text
    return str(r.json()["id"])


def answer(url: str, sid: str, rid: str, decision: str) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/agent/sessions/{sid}/permissions/{rid}",
        json={"decision": decision},
        headers=A,
        timeout=30,
    )


def test_a_permission_request_is_answered_on_another_replica(
    replicas: Replicas, database: str, tmp_path: Path
) -> None:
    """The turn runs on A and waits for an answer; the request is an event
    on B's stream, answered on B, and the tool runs (or not) on A."""
    a, b = replicas.start(), replicas.start()
    sid = create_with_approvals(a, tmp_path, 30)
    assert state(b, sid)["approvals"] is True
    last = 0
    for decision, name in (("once", "allowed"), ("deny", "denied")):
        marker = tmp_path / name
        t_a, on_a = watch(a, sid, "turn.completed", after=last)
        assert prompt(a, sid, f"call bash touch {marker}", mode="reject").status_code == 202
        asked = read_events(b, sid, A, "permission.requested", after=last)
        req = asked[-1]["data"]
        assert req["tool"] == "bash" and str(marker) in req["detail"]
        assert state(b, sid)["pending_permissions"] == [req["request"]]
        assert lock_holder_pid(database, sid) == replicas.procs[0].pid  # waiting on A
        time.sleep(0.3)
        assert not marker.exists()  # it waits for the answer
        r = answer(b, sid, req["request"], decision)
        assert r.status_code == 200, r.text
        rest = read_events(b, sid, A, "turn.completed", after=asked[-1]["id"])
        t_a.join(60)
        for events in (rest, on_a[0]):  # the same resolution in both replicas' streams
            res = [e["data"] for e in events if e["event"] == "permission.resolved"][-1]
            assert res == {"request": req["request"], "decision": decision, "why": "answered"}
        result = next(e for e in rest if e["event"] == "tool_result")["data"]
        assert result["is_error"] is (decision == "deny")
        assert marker.exists() is (decision == "once")
        # a second answer, on either replica, is a 409
        for url in (a, b):
            r = answer(url, sid, req["request"], "once")
            assert r.status_code == 409 and "answered already" in r.text, r.text
        last = rest[-1]["id"]
        assert state(a, sid)["pending_permissions"] == []
    r = answer(b, sid, "perm_nothing", "once")
    assert r.status_code == 404 and "perm_nothing" in r.text
    fork = httpx.post(f"{b}/v1/agent/sessions/{sid}/fork", headers=A)
    assert fork.status_code == 201 and fork.json()["approvals"] is True  # it asks too

    # an abort on B denies the request waiting on A
    marker = tmp_path / "aborted"
    assert prompt(a, sid, f"call bash touch {marker}").status_code == 202
    req = read_events(b, sid, A, "permission.requested", after=last)[-1]
    t0 = time.monotonic()
    assert httpx.post(f"{b}/v1/agent/sessions/{sid}/abort", headers=A).status_code == 200
    events = read_events(b, sid, A, "turn.aborted", after=req["id"])
    assert time.monotonic() - t0 < 5
    res = next(e["data"] for e in events if e["event"] == "permission.resolved")
    assert res["decision"] == "deny" and "aborted" in res["why"]
    r = answer(b, sid, req["data"]["request"], "once")
    assert r.status_code == 404 and "expired" in r.text, r.text
    assert not marker.exists()
    assert_every_call_answered(messages(b, sid))

    # no answer within the timeout denies
    sid = create_with_approvals(b, tmp_path, 2)
    marker = tmp_path / "timed-out"
    assert prompt(a, sid, f"call bash touch {marker}").status_code == 202
    events = read_events(b, sid, A, "turn.completed")
    req = next(e["data"] for e in events if e["event"] == "permission.requested")
    res = next(e["data"] for e in events if e["event"] == "permission.resolved")
    assert res["decision"] == "deny" and "no answer within 2 s" in res["why"]
    assert next(e["data"] for e in events if e["event"] == "tool_result")["is_error"]
    r = answer(b, sid, req["request"], "once")
    assert r.status_code == 404 and req["request"] in r.text and "expired" in r.text, r.text
    assert not marker.exists()

    # an answer sent while A's LISTEN connection is down (its NOTIFY lost) is
    # read when A has listened again
    import psycopg

    sid = create_with_approvals(b, tmp_path, 30)
    touched = tmp_path / "while-reconnecting"
    assert prompt(a, sid, f"call bash touch {touched}").status_code == 202
    req = read_events(b, sid, A, "permission.requested")[-1]
    with psycopg.connect(database, autocommit=True) as c:
        cut = c.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND query = 'LISTEN panto_agent'"
        ).fetchall()
    assert len(cut) == 2  # both replicas'
    t0 = time.monotonic()
    assert answer(b, sid, req["data"]["request"], "once").status_code == 200
    read_events(b, sid, A, "turn.completed", after=req["id"])
    assert touched.exists() and time.monotonic() - t0 < 5  # (not the 10 s poll)

    # A dies while its request waits: the request expires, the session goes on on B
    sid = create_with_approvals(b, tmp_path, 30)
    assert prompt(a, sid, f"call bash touch {marker}").status_code == 202
    req = read_events(b, sid, A, "permission.requested")[-1]
    replicas.procs[0].send_signal(signal.SIGKILL)
    replicas.procs[0].wait(10)
    t0 = time.monotonic()
    while state(b, sid)["state"] == "running":
        assert time.monotonic() - t0 < 5
        time.sleep(0.1)
    assert state(b, sid)["pending_permissions"] == []
    r = answer(b, sid, req["data"]["request"], "once")  # nobody waits for it
    assert r.status_code == 404 and "expired" in r.text, r.text
    assert prompt(b, sid, "hello").status_code == 202
    events = read_events(b, sid, A, "turn.completed", after=req["id"])
    assert [e["event"] for e in events][:3] == [
        "permission.resolved",
        "turn.aborted",
        "turn.started",
    ]
    assert events[0]["data"]["why"] == "its replica stopped"
    assert not marker.exists()
    assert_every_call_answered(messages(b, sid))


def test_a_batch_of_events_cut_in_flight_is_written_again(
    replicas: Replicas, database: str, tmp_path: Path
) -> None:
    """The connection a batch of events is being written on is cut (as a
    PostgreSQL restart or a network blip would): the batch is written again,
    in order, and no event is missing."""
    import psycopg

    a = replicas.start()
    sid = create_session(a, A, tmp_path)
    assert prompt(a, sid, "call bash sleep 1; echo after-the-blip").status_code == 202
    read_events(a, sid, A, "tool_call_start")
    with (
        psycopg.connect(database, autocommit=True) as locker,
        psycopg.connect(database, autocommit=True) as c,
        locker.transaction(),
    ):
        # the replica's next batch waits on this lock...
        locker.execute("LOCK TABLE panto_agent_events IN SHARE MODE")
        deadline = time.monotonic() + 20
        while True:
            waiting = c.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO panto_agent_events%'"
            ).fetchall()
            if waiting:
                break
            assert time.monotonic() < deadline, "no batch of events waited"
            time.sleep(0.05)
        # ... and its connection is cut
        for (pid,) in waiting:
            c.execute("SELECT pg_terminate_backend(%s)", (pid,))
    deadline = time.monotonic() + 30
    while True:
        r = httpx.get(f"{a}/v1/agent/sessions/{sid}", headers=A, timeout=10)
        if r.status_code == 200 and r.json()["state"] == "idle":
            break
        assert time.monotonic() < deadline, r.text
        time.sleep(0.2)
    events = read_events(a, sid, A, "turn.completed")
    ids = [e["id"] for e in events]
    assert ids == list(range(1, len(ids) + 1)), ids
    names = [e["event"] for e in events]
    assert "tool_result" in names and names[-1] == "turn.completed"
    assert "after-the-blip" in json.dumps(events)


def test_readiness_is_503_while_postgres_does_not_answer(
    isolated_home: Path, tmp_path: Path
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here
    url = f"postgresql://postgres:hunter2@127.0.0.1:{port}/nothing"
    env = {**os.environ, "PANTO_STARTUP_CACHE": "0", "PANTO_SESSION_URL": url}
    proc, served, err = start_serve(env, tmp_path)
    try:
        r = httpx.get(f"{served}/health/readiness", timeout=30)
        assert r.status_code == 503 and "does not answer" in r.json()["database"]
        r = httpx.post(f"{served}/v1/agent/sessions", json={"cwd": str(tmp_path)}, timeout=30)
        assert r.status_code == 503 and "does not answer" in r.json()["error"]["message"]
        assert "hunter2" not in r.text
        assert httpx.get(f"{served}/health/liveliness").status_code == 200
    finally:
        stop(proc)
    assert "hunter2" not in err.read_text()


# -- behind HAProxy ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


HAPROXY_CFG = """
global
    maxconn 512
defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    retries 3
    option redispatch
frontend panto
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /health/readiness
{servers}
"""


@pytest.fixture
def haproxy(replicas: Replicas, tmp_path: Path) -> Iterator[str]:
    exe = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
    if exe is None:
        pytest.skip("haproxy is not installed (apt-get install haproxy; .ci/run installs it)")
    urls = [replicas.start(), replicas.start()]
    port = free_port()
    servers = "\n".join(
        f"    server r{i} {u.removeprefix('http://')} check inter 300ms fall 1 rise 1"
        for i, u in enumerate(urls)
    )
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(HAPROXY_CFG.format(port=port, servers=servers))
    log = tmp_path / "haproxy.log"
    proc = subprocess.Popen(
        [exe, "-db", "-f", str(cfg)],
        stdout=open(log, "w"),  # noqa: SIM115 - the child owns it
        stderr=subprocess.STDOUT,
    )
    lb = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                if httpx.get(f"{lb}/health/liveliness", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield lb
    finally:
        proc.terminate()
        proc.wait(10)


def lock_holder_pid(database: str, sid: str) -> int | None:
    """The pid of the panto process holding the session's writer lock (its
    application_name says it)."""
    import psycopg

    with psycopg.connect(database, autocommit=True) as c:
        row = c.execute(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted "
            "AND l.objid = (hashtext(%s)::bigint & 4294967295)::oid",
            (sid,),
        ).fetchone()
    return int(row[0].split()[2]) if row else None


def test_behind_haproxy_clients_see_one_url_and_lose_nothing_when_a_replica_dies(
    replicas: Replicas, haproxy: str, database: str, tmp_path: Path
) -> None:
    lb = haproxy
    sid = create_session(lb, A, tmp_path)
    # a client following the session through the balancer, reconnecting with
    # Last-Event-ID whenever its connection drops (its replica died)
    seen: list[dict[str, Any]] = []
    reconnects = [0]
    done = threading.Event()

    def follow() -> None:
        turns = 0
        while not done.is_set():
            h = dict(A)
            if seen:
                h["last-event-id"] = str(seen[-1]["id"])
            try:
                with httpx.stream(
                    "GET", f"{lb}/v1/agent/sessions/{sid}/events", headers=h, timeout=60
                ) as r:
                    ev: dict[str, Any] = {}
                    for line in r.iter_lines():
                        if line.startswith("id: "):
                            ev = {"id": int(line[4:])}
                        elif line.startswith("event: "):
                            ev["event"] = line[7:]
                        elif line.startswith("data: "):
                            ev["data"] = json.loads(line[6:])
                            seen.append(ev)
                            turns += ev["event"] == "turn.completed"
                            if turns == 1:
                                done.set()
                                return
            except httpx.HTTPError:
                pass
            reconnects[0] += 1
            time.sleep(0.2)

    t = threading.Thread(target=follow)
    t.start()
    # (a session's requests land on both replicas: round robin)
    assert prompt(lb, sid, "call bash sleep 30").status_code == 202
    deadline = time.monotonic() + 20
    pid = None
    while pid is None or not any(e["event"] == "tool_call_start" for e in list(seen)):
        assert time.monotonic() < deadline, seen
        pid = lock_holder_pid(database, sid)
        time.sleep(0.1)
    time.sleep(1.0)
    victim = next(p for p in replicas.procs if p.pid == pid)
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    t0 = time.monotonic()
    while True:
        r = prompt(lb, sid, "call bash echo after-the-kill", mode="reject")
        if r.status_code == 202:
            break
        assert r.status_code in (409, 502, 503), r.text
        assert time.monotonic() - t0 < 5, "the session stayed locked by a dead replica"
        time.sleep(0.1)
    t.join(60)
    assert done.is_set(), (seen, reconnects)
    ids = [e["id"] for e in seen]
    assert ids == list(range(1, len(ids) + 1)), ids  # nothing lost, nothing twice
    names = [e["event"] for e in seen]
    assert names.count("turn.started") == 2 and names[-1] == "turn.completed"
    assert "turn.aborted" in names  # the killed turn, closed by the survivor
    assert "after-the-kill" in json.dumps(seen)
    assert reconnects[0] <= 1  # (1 when its stream was on the replica that died)
    assert_every_call_answered(messages(lb, sid))


@pytest.mark.bench
def test_replicas_bench_smoke(isolated_home: Path) -> None:
    if not ADMIN_URL:
        pytest.skip("PANTO_TEST_POSTGRES_URL is not set (tests/run_all.sh and .ci/run set it)")
    bench = Path(__file__).resolve().parents[2] / "bench" / "replicas.py"
    r = subprocess.run(
        [sys.executable, str(bench), "--url", ADMIN_URL]
        + ["--turns", "4", "--sleep", "1", "--samples", "3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("busy: ") == 3 and "concurrency:   4 turns" in r.stdout, r.stdout


def test_behind_haproxy_a_permission_request_is_answered_through_the_one_url(
    replicas: Replicas, haproxy: str, database: str, tmp_path: Path
) -> None:
    """Round robin sends the prompt, the event stream and the answer to
    either replica; the answer reaches the one waiting for it."""
    lb = haproxy
    sid = create_with_approvals(lb, tmp_path, 30)
    last = 0
    holders = set()
    for decision, name in (("once", "allowed"), ("always", "always"), ("deny", "denied")):
        marker = tmp_path / name
        assert prompt(lb, sid, f"call bash touch {marker}", mode="reject").status_code == 202
        req = read_events(lb, sid, A, "permission.requested", after=last)[-1]
        holders.add(lock_holder_pid(database, sid))
        if decision == "always":  # one request more: the answer goes to the other replica
            assert state(lb, sid)["pending_permissions"] == [req["data"]["request"]]
        # each answer goes through the balancer, to whichever replica it picks
        assert answer(lb, sid, req["data"]["request"], decision).status_code == 200
        events = read_events(lb, sid, A, "turn.completed", after=req["id"])
        res = next(e["data"] for e in events if e["event"] == "permission.resolved")
        assert res["decision"] == decision and res["why"] == "answered"
        assert marker.exists() is (decision != "deny")
        r = answer(lb, sid, req["data"]["request"], "once")
        assert r.status_code == 409, r.text
        last = events[-1]["id"]
    assert holders <= {p.pid for p in replicas.procs}
    # "always" is in the session: the same command, in a later turn (the
    # session opened anew, on either replica), runs without asking
    marker = tmp_path / "always"
    marker.unlink()
    assert prompt(lb, sid, f"call bash touch {marker}", mode="reject").status_code == 202
    events = read_events(lb, sid, A, "turn.completed", after=last)
    assert "permission.requested" not in [e["event"] for e in events] and marker.exists()
    assert_every_call_answered(messages(lb, sid))

"""One writer per session: the flock on ``<file>.lock``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from panto.conversation import Message, Text
from panto.errors import SessionError
from panto.sessions import FSJSONLStore, read_session

PYTHONPATH = str(Path(__file__).resolve().parents[2] / "python")


def _session(sessions_dir: Path, workdir: str) -> Path:
    with FSJSONLStore(sessions_dir, workdir) as store:
        store.append_messages([Message.user("q"), Message("assistant", (Text("a"),))])
    return store.path


def test_second_writer_in_process_gets_a_clear_error(sessions_dir: Path, workdir: str) -> None:
    p = _session(sessions_dir, workdir)
    first = FSJSONLStore.open(p)
    lock = Path(str(p) + ".lock")
    assert lock.read_text().strip() == str(os.getpid())
    with pytest.raises(SessionError) as exc:
        FSJSONLStore.open(p)
    msg = str(exc.value)
    assert f"pid {os.getpid()}" in msg and "in use" in msg and str(p) in msg
    # the holder is unaffected
    first.append_messages([Message.user("still mine"), Message("assistant", (Text("y"),))])
    first.close()
    assert not lock.exists()
    with FSJSONLStore.open(p) as again:  # free after close
        again.append_messages([Message.user("ok")])
    loaded = read_session(p)
    assert [m.text for m in loaded.conversation] == ["q", "a", "still mine", "y"]
    assert loaded.dangling_user == "ok"


def test_new_session_holds_its_lock_from_the_start(sessions_dir: Path, workdir: str) -> None:
    store = FSJSONLStore(sessions_dir, workdir)
    store.append_messages([Message.user("x")])
    with pytest.raises(SessionError, match="in use"):
        FSJSONLStore.open(store.path)
    store.close()


def test_reading_needs_no_lock(sessions_dir: Path, workdir: str) -> None:
    p = _session(sessions_dir, workdir)
    with FSJSONLStore.open(p):
        assert len(read_session(p).conversation) == 2


def test_second_writer_process_is_told_the_holders_pid(sessions_dir: Path, workdir: str) -> None:
    p = _session(sessions_dir, workdir)
    code = textwrap.dedent(
        f"""
        import sys, time
        from panto.sessions import FSJSONLStore
        store = FSJSONLStore.open({str(p)!r})
        print("ready", flush=True)
        sys.stdin.read()
        """
    )
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"ready"
        with pytest.raises(SessionError) as exc:
            FSJSONLStore.open(p)
        assert f"pid {child.pid}" in str(exc.value)
        # the holder dies without cleaning up: the stale lock file does not block us
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        assert Path(str(p) + ".lock").exists()
        with FSJSONLStore.open(p) as store:
            store.append_messages([Message.user("mine now")])
        assert read_session(p).dangling_user == "mine now"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()

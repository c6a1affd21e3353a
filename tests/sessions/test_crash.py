"""Crash safety: a writer killed with SIGKILL at many points never loses a
committed batch, never leaves a partial one visible, and the session can
always be loaded and continued."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

from support.crash_child import batch, batches_in, canonical

from panto.sessions import FSJSONLStore, SessionWarning, read_session

HERE = Path(__file__).resolve().parent
PYTHONPATH = os.pathsep.join([str(HERE.parents[1] / "python"), str(HERE)])
KILL_POINTS = 60


def test_sigkill_at_many_points(sessions_dir: Path, workdir: str) -> None:
    with FSJSONLStore(sessions_dir, workdir) as store:
        store.append_messages(batch(0))
    path = store.path
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    rng = random.Random(1234)
    committed = 1  # batches known to be committed (the append returned)
    torn_seen = 0
    for k in range(KILL_POINTS):
        child = subprocess.Popen(
            [sys.executable, str(HERE.parent / "support" / "crash_child.py"), str(path)],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert child.stdout is not None
        first = child.stdout.readline().decode()
        assert first.startswith("start "), first
        start = int(first.split()[1])
        assert start >= committed
        # kill after 0..5 further commits plus 0..3 ms: before, during and
        # after writes and fsyncs, and sometimes right after open/repair
        wait_for = rng.randrange(0, 6)
        seen = start
        while seen < start + wait_for:
            line = child.stdout.readline()
            assert line, "child died"
            seen = int(line)
        time.sleep(rng.random() * 0.003)
        child.send_signal(signal.SIGKILL)
        rest = child.stdout.read().split()
        child.wait(10)
        assert child.returncode == -signal.SIGKILL
        reported = int(rest[-1]) if rest else seen
        assert reported >= committed
        committed = reported
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded = read_session(path)
        torn_seen += any(issubclass(w.category, SessionWarning) for w in caught)
        msgs = list(loaded.conversation)
        n = batches_in(len(msgs))
        assert n is not None, f"kill {k}: a partial batch is visible ({len(msgs)} messages)"
        assert n >= committed, f"kill {k}: committed batches lost ({n} < {committed})"
        assert n <= committed + 1  # at most the batch in flight
        assert msgs == canonical(n)
        assert loaded.dangling_user is None
        committed = n
    # the session can be continued after all that
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = FSJSONLStore.open(path)
    with store:
        store.append_messages(batch(committed))
    final = read_session(path)
    assert list(final.conversation) == canonical(committed + 1)
    print(
        f"\ncrash test: {KILL_POINTS} SIGKILL points, {committed + 1} batches, "
        f"{torn_seen} loads saw a torn tail, file {path.stat().st_size} bytes"
    )

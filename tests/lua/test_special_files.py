"""std.read and std.write on special files: FIFOs and device nodes.

A FIFO with no writer blocks ``open`` (and with it the Lua thread that runs
every tool call); ``/dev/zero`` and ``/dev/urandom`` never end; replacing a
FIFO or a device node with a regular file destroys it.  Real FIFOs
(``os.mkfifo``) and real device nodes (``mknod`` in a temp dir) are used.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from support.lua_caller import Caller

from panto.lua import LuaRuntime, LuaToolSource, load_extensions
from panto.tools import ToolCall, ToolOutput

# (major, minor) of /dev/zero and /dev/urandom on Linux
ZERO, URANDOM, NULL = (1, 5), (1, 9), (1, 3)


def _mknod(path: Path, dev: tuple[int, int]) -> Path:
    """A character device node at ``path`` (root only: skip otherwise)."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(*dev))
    except PermissionError:  # pragma: no cover - not root
        pytest.skip("mknod needs root (CAP_MKNOD)")
    return path


def test_read_fifo_fails_at_once_and_the_next_call_runs(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "link.txt").symlink_to(fifo)
    ok = tmp_path / "ok.txt"
    ok.write_text("still here\n")
    rt = LuaRuntime()
    load_extensions(rt, no_extensions=True)
    results: list[ToolOutput] = []

    def calls() -> None:
        # under a short tool timeout: without the fix the open blocks the Lua
        # thread, the timeout cannot fire, and neither call returns
        for path in (fifo, tmp_path / "link.txt", ok):
            results.extend(rt.invoke_batch([ToolCall("c", "read", {"path": str(path)})], [2.0]))

    worker = threading.Thread(target=calls, daemon=True)
    t0 = time.monotonic()
    worker.start()
    worker.join(5.0)
    try:
        assert not worker.is_alive(), "read of a FIFO blocked the tool runner"
        assert time.monotonic() - t0 < 2.0
        first, link, second = results
        assert first.is_error
        assert first.content == (
            f"{fifo} is a FIFO (named pipe), not a regular file; read only reads regular files"
        )
        assert link.is_error and "link.txt is a FIFO (named pipe), not a regular" in link.content
        assert not second.is_error and "still here" in second.content
        assert stat.S_ISFIFO(fifo.stat().st_mode)
    finally:
        if worker.is_alive():  # unblock the stuck open so the runtime can close
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            worker.join(5.0)
        rt.close()


def test_fs_read_refuses_a_fifo_without_blocking(source: LuaToolSource, tmp_path: Path) -> None:
    """``panto.fs.read`` itself (what extensions call) checks the open
    descriptor: a FIFO is refused even when a writer holds it open."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer that never closes
    try:
        ok, msg = source.runtime.execute(
            "return pcall(panto.fs.read, ...)", str(fifo), chunkname="=fifo"
        )
    finally:
        os.close(writer)
    assert ok is False
    assert "is a FIFO (named pipe), not a regular file" in msg


_READ_DEVICE = textwrap.dedent(
    """
    import json, sys
    from panto.lua import LuaRuntime, LuaToolSource, load_extensions
    from panto.tools import ToolCall
    rt = LuaRuntime()
    load_extensions(rt, no_extensions=True)
    out = LuaToolSource(rt).invoke_batch([ToolCall("c1", "read", {"path": sys.argv[1]})])[0]
    rt.close()
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
    print(json.dumps({"error": out.is_error, "text": out.content[:300],
                      "peak_kb": int(hwm.split()[1])}))
    """
)


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    import resource

    # today's unbounded read of /dev/zero must fail here, not take the machine
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


@pytest.mark.parametrize("dev", [ZERO, URANDOM], ids=["zero", "urandom"])
def test_read_device_is_refused_with_bounded_memory(dev: tuple[int, int], tmp_path: Path) -> None:
    node = _mknod(tmp_path / "dev.txt", dev)
    proc = subprocess.run(
        [sys.executable, "-c", _READ_DEVICE, str(node)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limit_memory,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json

    res = json.loads(proc.stdout)
    assert res["error"]
    assert (
        res["text"]
        == f"{node} is a character device, not a regular file; read only reads regular files"
    )
    # the runtime with the std tools loaded is ~40-60 MB; reading the device
    # today grows past 1 GB in a second
    assert res["peak_kb"] < 150_000, res


def test_write_refuses_fifo_and_device_nodes(call: Caller, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    out = call("write", path=str(fifo), content="x\n")
    assert out.is_error
    assert out.content == (
        f"{fifo} is a FIFO (named pipe), not a regular file; write only writes regular files "
        "(left as it is)"
    )
    assert stat.S_ISFIFO(fifo.stat().st_mode)

    node = _mknod(tmp_path / "null", NULL)
    out = call("write", path=str(node), content="x\n")
    assert out.is_error and "is a character device, not a regular file" in out.content
    st = node.stat()
    assert stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 1 and os.minor(st.st_rdev) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null", "pipe"]  # no temp file left


def test_fs_write_refuses_special_files(source: LuaToolSource, tmp_path: Path) -> None:
    """``panto.fs.write`` (extensions) refuses them too, atomic or not."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for atomic in ("true", "false"):
        ok, msg = source.runtime.execute(
            f"return pcall(panto.fs.write, ..., 'x', {{atomic = {atomic}}})",
            str(fifo),
            chunkname="=fifo",
        )
        assert ok is False, atomic
        assert "is a FIFO (named pipe), not a regular file; panto writes only regular files" in msg
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_stat_names_special_types(source: LuaToolSource, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    types = source.runtime.execute(
        "local a, b, c = ... return panto.fs.stat(a).type, panto.fs.stat(b).type, "
        "panto.fs.stat(c).type",
        str(fifo),
        "/dev/null",
        str(tmp_path),
        chunkname="=stat",
    )
    assert types == ["fifo", "char_device", "directory"]


def test_grep_of_a_fifo_fails_at_once(call: Caller, tmp_path: Path) -> None:
    """It used to read the FIFO until the search's 60 s timeout."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    out = call("grep", pattern="x", path=str(fifo))
    assert time.monotonic() - t0 < 5
    assert out.is_error and out.content == (
        f"grep: {fifo} is a FIFO (named pipe), not a regular file or a directory"
    )
    # inside a searched directory, FIFOs are skipped, not read
    (tmp_path / "a.txt").write_text("x marks\n")
    out = call("grep", pattern="x", path=str(tmp_path))
    assert not out.is_error and out.content.splitlines() == [f"{tmp_path}/a.txt:1:x marks"]
    assert time.monotonic() - t0 < 10

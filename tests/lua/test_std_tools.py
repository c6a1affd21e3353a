"""What it must show, item 5: the std tools' edge cases."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from support.lua_caller import Caller

# ---------------------------------------------------------------- edit


def test_edit_no_match(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("def f():\n    return 1\n")
    out = call("edit", path=str(f), old_string="return 2", new_string="return 3")
    assert out.is_error and "not found" in out.content
    assert f.read_text() == "def f():\n    return 1\n"


def test_edit_no_match_hint(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("def f():\n    return 1\n")
    out = call("edit", path=str(f), old_string="def f():\n  return 1", new_string="x")
    assert out.is_error and "line 1" in out.content


def test_edit_several_matches(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x = 1\nx = 1\nx = 1\n")
    out = call("edit", path=str(f), old_string="x = 1", new_string="x = 2")
    assert out.is_error and "occurs 3 times" in out.content and "replace_all" in out.content
    assert f.read_text() == "x = 1\nx = 1\nx = 1\n"
    out = call("edit", path=str(f), old_string="x = 1", new_string="x = 2", replace_all=True)
    assert not out.is_error and "replaced 3 occurrences" in out.content
    assert f.read_text() == "x = 2\nx = 2\nx = 2\n"


def test_edit_crlf_preserved(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "win.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    out = call("edit", path=str(f), old_string="one\ntwo\n", new_string="uno\ndos\nmas\n")
    assert not out.is_error, out.content
    assert f.read_bytes() == b"uno\r\ndos\r\nmas\r\nthree\r\n"
    out = call("edit", path=str(f), old_string="three", new_string="tres\ncuatro")
    assert not out.is_error, out.content
    assert f.read_bytes() == b"uno\r\ndos\r\nmas\r\ntres\r\ncuatro\r\n"


def test_edit_non_ascii(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "u.txt"
    f.write_text("naïve café — 日本語\nzweite Zeile: Größe\n", encoding="utf-8")
    out = call("edit", path=str(f), old_string="café — 日本語", new_string="Café ☕ 日本")
    assert not out.is_error, out.content
    assert f.read_text(encoding="utf-8") == "naïve Café ☕ 日本\nzweite Zeile: Größe\n"
    assert "Café ☕ 日本" in out.content


def test_edit_empty_file(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "empty.txt"
    f.write_text("")
    out = call("edit", path=str(f), old_string="anything", new_string="x")
    assert out.is_error and "empty" in out.content
    out = call("edit", path=str(f), old_string="", new_string="filled\n")
    assert not out.is_error
    assert f.read_text() == "filled\n"
    out = call("edit", path=str(f), old_string="", new_string="again")
    assert out.is_error and "not empty" in out.content


def test_edit_keeps_mode(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "run.sh"
    f.write_text("#!/bin/sh\necho old\n")
    f.chmod(0o750)
    out = call("edit", path=str(f), old_string="old", new_string="new")
    assert not out.is_error
    assert stat.S_IMODE(f.stat().st_mode) == 0o750
    assert f.read_text() == "#!/bin/sh\necho new\n"


def test_edit_missing_file_and_identical(call: Caller, tmp_path: Path) -> None:
    out = call("edit", path=str(tmp_path / "nope"), old_string="a", new_string="b")
    assert out.is_error and "file not found" in out.content
    f = tmp_path / "s.txt"
    f.write_text("a")
    out = call("edit", path=str(f), old_string="a", new_string="a")
    assert out.is_error and "identical" in out.content


# ---------------------------------------------------------------- read


def test_read_numbered_offset_limit(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "n.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = call("read", path=str(f))
    assert not out.is_error
    assert out.content.splitlines()[0] == "     1\tline 1"
    assert "line 10" in out.content and "showing" not in out.content
    out = call("read", path=str(f), offset=4, limit=2)
    lines = out.content.splitlines()
    assert lines[:2] == ["     4\tline 4", "     5\tline 5"]
    assert "showing lines 4-5 of 10" in out.content and "offset=6" in out.content
    out = call("read", path=str(f), offset=50)
    assert out.is_error and "past the end" in out.content


def test_read_binary(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "b.bin"
    f.write_bytes(b"\x7fELF\x00\x01\x02" + bytes(range(256)))
    out = call("read", path=str(f))
    assert out.is_error and "binary" in out.content


def test_read_missing(call: Caller, tmp_path: Path) -> None:
    out = call("read", path=str(tmp_path / "missing.txt"))
    assert out.is_error and out.content == f"file not found: {tmp_path / 'missing.txt'}"
    out = call("read", path=str(tmp_path))
    assert out.is_error and "is a directory" in out.content


def test_read_long_line(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "long.txt"
    f.write_text("short\n" + "é" * 5000 + "\nend\n", encoding="utf-8")
    out = call("read", path=str(f))
    assert not out.is_error
    line2 = out.content.splitlines()[1]
    assert "line truncated" in line2
    assert len(line2.encode()) < 2100
    assert "end" in out.content and "long line(s) cut" in out.content


def test_read_crlf_and_empty(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_bytes(b"a\r\nb\r\n")
    assert call("read", path=str(f)).content == "     1\ta\n     2\tb"
    e = tmp_path / "e.txt"
    e.write_text("")
    assert "empty file" in call("read", path=str(e)).content


def test_read_large_file_output_capped(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    f.write_text("".join("x" * 150 + f" {i}\n" for i in range(5000)))
    out = call("read", path=str(f))
    assert len(out.content) < 110_000
    assert "use offset=" in out.content


# ---------------------------------------------------------------- write


def test_write_missing_dir(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "deep" / "er" / "new.txt"
    out = call("write", path=str(f), content="hello\nwörld\n")
    assert not out.is_error and "Created" in out.content and "13 bytes" in out.content
    assert f.read_text() == "hello\nwörld\n"
    out = call("write", path=str(f), content="v2")
    assert "Overwrote" in out.content and f.read_text() == "v2"
    assert [p.name for p in f.parent.iterdir()] == ["new.txt"]  # no temp files left


def test_write_keeps_mode_and_symlink(call: Caller, tmp_path: Path) -> None:
    target = tmp_path / "real.sh"
    target.write_text("old")
    target.chmod(0o700)
    link = tmp_path / "link.sh"
    link.symlink_to(target)
    out = call("write", path=str(link), content="new")
    assert not out.is_error
    assert link.is_symlink() and target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o700


# ---------------------------------------------------------------- bash


def test_bash_output_cap(call: Caller) -> None:
    out = call("bash", command="seq 1 200000")
    assert not out.is_error
    assert out.content.startswith("1\n2\n3\n")
    assert out.content.rstrip().endswith("200000")
    assert "bytes of output omitted" in out.content
    assert len(out.content) < 32_000


def test_bash_nonzero_exit(call: Caller) -> None:
    out = call("bash", command="echo out; echo err >&2; exit 3")
    assert out.is_error
    assert "out\nerr\n" in out.content and "[exit code 3]" in out.content


def test_bash_timeout(call: Caller, tmp_path: Path) -> None:
    t0 = time.monotonic()
    out = call(
        "bash", command=f"echo started; sleep 30 & echo $! > {tmp_path}/bg; sleep 30", timeout=0.5
    )
    assert time.monotonic() - t0 < 4
    assert out.is_error and "timed out after 0.5 s" in out.content and "started" in out.content
    bg = int((tmp_path / "bg").read_text())
    time.sleep(0.1)
    try:
        os.kill(bg, 0)
        state = Path(f"/proc/{bg}/stat").read_text().split(") ", 1)[1].split()[0]
        assert state == "Z"
    except ProcessLookupError:
        pass


def test_bash_cwd_and_no_stdin(call: Caller) -> None:
    out = call("bash", command="pwd; cat; echo ok")
    assert not out.is_error and out.content.splitlines()[0] == os.getcwd()
    assert out.content.rstrip().endswith("ok")
    out = call("bash", command="true")
    assert out.content == "(no output)"


def test_std_decls(source: object) -> None:
    names = {d.name for d in source.decls()}  # type: ignore[attr-defined]
    assert {"read", "write", "edit", "bash"} <= names

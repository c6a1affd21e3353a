"""``panto lua``: a lua-compatible interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PY = str(Path(__file__).resolve().parents[2] / "python")


def lua(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = PY + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "panto.cli.lua", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        cwd=cwd,
    )


def test_e_and_version() -> None:
    r = lua("-e", "io.write(_VERSION:sub(5))")
    assert r.returncode == 0 and r.stdout == "5.4"
    r = lua("-v")
    assert r.returncode == 0 and r.stdout.startswith("Lua 5.4.8")


def test_script_args_and_exit_code(tmp_path: Path) -> None:
    s = tmp_path / "s.lua"
    s.write_text(
        "#!/usr/bin/env lua\nprint(arg[0], arg[1], arg[2], select('#', ...))\n"
        "panto.time.sleep(5)\nos.exit(tonumber(arg[1]))\n"
    )
    r = lua("--", str(s), "3", "x")
    assert r.stdout == f"{s}\t3\tx\t2\n"
    assert r.returncode == 3


def test_error_exit_1() -> None:
    r = lua("-e", "error('boom')")
    assert r.returncode == 1
    assert r.stderr.startswith("lua: (command line):1: boom")


def test_bad_option() -> None:
    r = lua("-Z")
    assert r.returncode == 1 and "unrecognized option '-Z'" in r.stderr and "usage:" in r.stderr


def test_missing_script() -> None:
    r = lua("/nonexistent/x.lua")
    assert r.returncode == 1 and "cannot open /nonexistent/x.lua" in r.stderr


def test_l_requires_from_cwd(tmp_path: Path) -> None:
    (tmp_path / "mymod.lua").write_text("return {v = 41}")
    r = lua("-l", "mymod", "-l", "m2=mymod", "-e", "print(mymod.v + 1, m2.v)", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "42\t41\n"


def test_stdin_and_dash() -> None:
    r = lua(stdin="print('in', ...)")
    assert r.stdout == "in\n"
    r = lua("-", "a", stdin="print('in', ...)")
    assert r.stdout == "in\ta\n"


def test_interactive() -> None:
    r = lua("-i", stdin="x = 20\nx + 1\nfor i = 1, 2 do\nprint(i)\nend\nerror('oops')\n=x\n")
    assert r.returncode == 0
    assert "21\n" in r.stdout and "1\n2\n" in r.stdout and "20\n" in r.stdout
    assert "oops" in r.stderr


def test_popen_and_execute_work_here() -> None:
    r = lua(
        "-e",
        "local f = io.popen('echo hi') print(f:read('a')) print(f:close()) "
        "print(os.execute('exit 3'))",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "hi\n\ntrue\texit\t0\nnil\texit\t3\n"


@pytest.mark.parametrize("var", ["LUA_PATH", "LUA_INIT"])
def test_environment_ignored(var: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(var, "error('leak')")
    r = lua("-e", "print(package.path:find('leak') == nil)")
    assert r.stdout == "true\n"

"""Issue 13: the default install is a coding agent: through the CLI, the
mock model calls read, bash, edit and grep (std tools shipped as Lua
extensions), and /tools lists them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def panto(
    cwd: Path, *args: str, input: str = "", model: str = "mock/anthropic"
) -> subprocess.CompletedProcess[str]:
    home = cwd.parent / "home"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "NO_COLOR": "1",
    }
    env.pop("PANTO_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "panto", "--model", model, "--no-session", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
        input=input,
    )


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    (p / "hello.txt").write_text("hello world\nsecond line\n")
    return p


@pytest.mark.parametrize(
    "tool, args, expect",
    [
        ("read", {"path": "hello.txt"}, "1\thello world"),
        ("bash", {"command": "echo from-bash"}, "from-bash"),
        ("grep", {"pattern": "second"}, "hello.txt:2:second line"),
        (
            "edit",
            {"path": "hello.txt", "old_string": "world", "new_string": "there"},
            "+hello there",
        ),
    ],
)
def test_mock_calls_std_tool(proj: Path, tool: str, args: dict[str, str], expect: str) -> None:
    r = panto(proj, "-p", f"call {tool} {json.dumps(args)}")
    assert r.returncode == 0, r.stderr
    assert "The tool returned: " in r.stdout and expect in r.stdout, r.stdout
    if tool == "edit":
        assert (proj / "hello.txt").read_text() == "hello there\nsecond line\n"


@pytest.mark.parametrize("model", ["mock/anthropic", "mock/openai"])
def test_mock_takes_plain_text_as_the_first_required_parameter(proj: Path, model: str) -> None:
    """`call read hello.txt` and `call bash echo a  b` work without JSON: the
    text becomes the tool's first required parameter (path, command)."""
    r = panto(proj, "-p", "call read hello.txt", model=model)
    assert r.returncode == 0, r.stderr
    assert "1\thello world" in r.stdout, r.stdout
    r = panto(proj, "-p", "call bash echo plain  text | tr a-z A-Z", model=model)
    assert r.returncode == 0, r.stderr
    assert "PLAIN TEXT" in r.stdout, r.stdout


def test_tools_lists_the_std_tools(proj: Path) -> None:
    r = panto(proj, input="/tools\n")
    assert r.returncode == 0, r.stderr
    rows = [line.removeprefix("> ").split() for line in r.stdout.splitlines()]
    listed = {row[0] for row in rows if len(row) > 1 and row[1].startswith("panto-lua:")}
    assert {"read", "write", "edit", "bash", "grep", "find", "ls"} <= listed, r.stdout

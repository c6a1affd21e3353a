"""`panto -p` and the interactive mode with the Lua runtime loaded, offline
(mock provider), in subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def panto(
    *args: str, cwd: Path, input: str | None = None, pre: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PANTO_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "NO_COLOR")
    }
    # the project fixture set XDG_CONFIG_HOME to an empty dir; keep history out of ~
    env["XDG_STATE_HOME"] = str(cwd / ".state")
    code = f"import sys; {pre}\nfrom panto.cli import main\nsys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def out_lines(out: str) -> list[str]:
    """stdout lines without the "> " prompts (stdin is a pipe: the prompt
    is printed without a newline before each answer)."""
    res = []
    for line in out.splitlines():
        while line.startswith("> "):
            line = line[2:]
        res.append(line)
    return res


def stream_json(r: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in r.stdout.splitlines()]


@pytest.mark.parametrize("model", ["mock/anthropic", "mock/openai"])
def test_print_mode_calls_std_read(project: Path, model: str) -> None:
    (project / "x.txt").write_text("hello from x\n")
    r = panto("-p", 'call read {"path": "x.txt"}', "--model", model, cwd=project)
    assert r.returncode == 0, r.stderr
    assert "The tool returned:" in r.stdout and "hello from x" in r.stdout
    assert "⚙ read" in r.stderr and "hello from x" in r.stderr  # one-line summaries
    assert "warning" not in r.stderr


def test_print_stream_json_tool_events(project: Path) -> None:
    (project / "x.txt").write_text("line one\n")
    r = panto(
        "-p",
        'call read {"path": "x.txt"}',
        "--model",
        "mock/anthropic",
        "--output-format",
        "stream-json",
        cwd=project,
    )
    assert r.returncode == 0, r.stderr
    lines = stream_json(r)
    (res,) = [d for d in lines if d["type"] == "tool_result"]
    assert res["call"]["name"] == "read" and "line one" in res["content"]
    assert res["is_error"] is False
    assert lines[-1]["type"] == "result" and lines[-1]["rounds"] == 2


def test_project_extension_tool_and_after_hook(project: Path) -> None:
    r = panto("-p", 'call shout {"text": "hey"}', "--model", "mock/anthropic", cwd=project)
    assert r.returncode == 0, r.stderr
    assert "HEY!!!" in r.stdout  # the tool ran and after_tool_call rewrote its result


def test_deny_removes_a_std_tool(project: Path) -> None:
    r = panto("-p", 'call bash {"command": "echo ran"}', "--model", "mock/anthropic", cwd=project)
    assert "The tool returned: ran" in r.stdout, r.stderr
    r = panto(
        "-p",
        'call bash {"command": "echo ran"}',
        "--model",
        "mock/anthropic",
        "--deny",
        "std.bash",
        cwd=project,
    )
    assert r.returncode == 0, r.stderr
    # the model was not offered bash, so the mock just echoes
    assert r.stdout.startswith("You said: call bash")


def test_no_extensions_and_deny_in_tools_listing(project: Path) -> None:
    r = panto("--model", "mock/anthropic", cwd=project, input="/tools\n")
    assert r.returncode == 0, r.stderr
    names = {line.split()[0] for line in out_lines(r.stdout) if "panto-lua" in line}
    assert names == {"read", "write", "edit", "bash", "grep", "find", "ls", "shout"}
    assert "panto-lua:std.read" in r.stdout and "panto-lua:test.recorder" in r.stdout

    r = panto(
        "--model",
        "mock/anthropic",
        "--no-extensions",
        "--deny",
        "std.bash",
        "--deny",
        "std.write",
        cwd=project,
        input="/tools\n/greet x\n",
    )
    assert r.returncode == 0, r.stderr
    names = {line.split()[0] for line in out_lines(r.stdout) if "panto-lua" in line}
    assert names == {"read", "edit", "grep", "find", "ls"}
    assert "unknown command /greet" in r.stdout  # the project extension did not load


def test_interactive_lua_command_help_and_extensions(project: Path) -> None:
    r = panto(
        "--model",
        "mock/anthropic",
        cwd=project,
        input="/help\n/greet big world\n/extensions\nhello there\n/hooklog\n/exit\n",
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "/greet" in out and "Say hello" in out and "/extensions" in out
    assert "hello, big world" in out
    ext_lines = [line for line in out_lines(out) if line.startswith(("std.", "test."))]
    states = {line.split()[0]: line.split()[1:3] for line in ext_lines}
    assert states["test.recorder"] == ["active", "project"]
    assert states["std.bash"] == ["active", "base"]
    assert "You said: hello there" in out
    # the hooks of the interactive turn, read back through the Lua command
    log_line = next(line for line in out_lines(out) if line.startswith("[{"))
    events = [e["event"] for e in json.loads(log_line)]
    assert events == ["session_start", "user_message", "turn_end"]


def test_extension_errors_are_warnings(project: Path) -> None:
    ext = project / ".panto" / "extensions"
    (ext / "broken.lua").write_text(
        "return {name = 'me.broken', activate = function() error('boom') end}"
    )
    (ext / "syntax.lua").write_text("return {{{")
    r = panto("-p", "hi", "--model", "mock/anthropic", cwd=project)
    assert r.returncode == 0
    assert r.stdout == "You said: hi\n"
    assert "warning: extension: activating me.broken" in r.stderr and "boom" in r.stderr
    assert "syntax.lua" in r.stderr


def test_missing_lupa_warns_once_and_continues(project: Path) -> None:
    pre = "sys.modules['lupa'] = None; sys.modules['lupa.lua54'] = None"
    r = panto("-p", "hi", "--model", "mock/anthropic", cwd=project, pre=pre)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "You said: hi\n"
    warnings = [line for line in r.stderr.splitlines() if "warning" in line]
    # lupa is a core dependency now: the one warning names the failed import
    assert len(warnings) == 1 and "Lua extensions are unavailable" in warnings[0], r.stderr
    assert "lupa" in warnings[0]

    r = panto("--model", "mock/anthropic", cwd=project, pre=pre, input="/tools\n/extensions\n")
    assert r.returncode == 0, r.stderr
    assert "no tools" in r.stdout and "no Lua extensions" in r.stdout


def test_print_mode_does_not_import_lupa_before_the_runtime(project: Path) -> None:
    """`panto --version` and `panto decode` never import lupa; `panto -p`
    imports it only when the runtime starts."""
    code = "import sys, panto.cli.chat, panto.lua; print('lupa' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project)
    assert r.stdout.strip() == "False", r.stderr


def test_print_mode_start_up_imports_stay_lean(project: Path, tmp_path: Path) -> None:
    """`panto -p` (std tools loaded, a session recorded) leaves out the
    modules start-up made lazy or replaced (bench/startup.py): platform and
    uuid (os.uname, os.urandom), secrets, ctypes (lupa loaded RTLD_GLOBAL),
    glob and shlex (first use only)."""
    dump = tmp_path / "modules.txt"
    pre = f"import atexit; atexit.register(lambda: open({str(dump)!r}, 'w').write(' '.join(sys.modules)))"
    r = panto("-p", "hi", "--model", "mock/anthropic", cwd=project, pre=pre)
    assert r.returncode == 0, r.stderr
    mods = set(dump.read_text().split())
    assert "panto.lua.runtime" in mods and "panto.sessions.jsonl" in mods
    assert not mods & {"platform", "uuid", "secrets", "ctypes", "glob", "shlex"}

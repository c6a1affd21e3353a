"""Help and docs a new user reads first (issue 23, item 16), checked
against what the code does."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from support.repl import Env

ROOT = Path(__file__).resolve().parents[2]


def test_sessions_help_lists_its_commands(env: Env) -> None:
    r = env.run("sessions", "--help")
    assert r.returncode == 0, r.stderr
    for command in ("tree ID", "export ID", "import FILE"):
        assert f"panto sessions {command}" in r.stdout, command


def test_the_json_result_example_has_every_key(env: Env) -> None:
    r = env.run("-p", "hello", "--model", "mock/openai", "--output-format", "json")
    assert r.returncode == 0, r.stderr
    real = set(json.loads(r.stdout))
    assert {"session_id", "leaf_id"} <= real
    doc = (ROOT / "docs" / "cli.md").read_text()
    example = doc.split("**json**: one object when the turn ends:", 1)[1].split("```")[1]
    assert (
        set(re.findall(r'^[{ ]*"(\w+)":', example, re.M)) | set(re.findall(r', "(\w+)":', example))
        >= real
    )


def test_quit_is_documented(env: Env) -> None:
    assert "`/quit`" in (ROOT / "docs" / "cli.md").read_text()
    r = env.run("--model", "mock/anthropic", input="/help\n/quit\nnot sent\n")
    assert r.returncode == 0, r.stderr
    assert "/quit" in r.stdout and "You said" not in r.stdout


def test_max_turns_names_the_flag(env: Env) -> None:
    r = env.run("-p", "call ls", "--model", "mock/anthropic", "--max-turns", "1")
    assert r.returncode == 1
    assert "stopped: the turn reached --max-turns 1 (model responses per prompt)" in r.stderr
    assert "max_tool_rounds" not in r.stderr


def test_nothing_cites_a_file_outside_the_repository() -> None:
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "python").rglob("*.py")]
    outside = "shared" + "/reference"  # (spelled in two, so this file does not cite it either)
    cited = [str(f.relative_to(ROOT)) for f in files if outside in f.read_text()]
    assert cited == []


def test_readme_set_up_has_two_commands_and_a_quick_python_check() -> None:
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^(\d)\. ", setup, re.M) == ["1", "2"]
    assert setup.count("```sh") == 2
    assert "python -m pytest -q tests/" in setup


def test_the_startup_bench_benches_the_panto_that_imports(tmp_path: Path) -> None:
    """After README's `pip install .` the source tree has no compiled core:
    the bench's default must then be the installed panto (it picks what
    ``import panto`` gives)."""
    probe = (
        "import sys; sys.path.insert(0, 'bench'); import startup; print(startup.uses_installed())"
    )

    def uses_installed(pythonpath: str | None) -> str:
        env = {"PATH": "/usr/bin:/bin"}
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        r = subprocess.run(
            # -S: no .pth files, so no editable install's finder; PYTHONPATH decides
            [sys.executable, "-S", "-c", probe],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    installed = tmp_path / "site-packages"
    (installed / "panto").mkdir(parents=True)
    (installed / "panto" / "__init__.py").write_text("")
    assert uses_installed(str(installed)) == "True"
    assert uses_installed(str(ROOT / "python")) == "False"

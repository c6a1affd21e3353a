"""The default install is the whole agent (issue 13): lupa is a core
dependency, and without a loadable lupa every Lua command prints one line,
never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# runs the CLI with `lupa` made unimportable
NO_LUPA = (
    "import sys; sys.modules['lupa'] = None; sys.modules['lupa.lua54'] = None\n"
    "from panto.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _run(code: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )


def test_lupa_is_a_core_dependency() -> None:
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(d.replace(" ", "").startswith("lupa") for d in meta["dependencies"])
    # `.[lua]` keeps working as an (empty) compatibility extra
    assert "lua" in meta["optional-dependencies"]


def test_lua_help() -> None:
    from panto.cli import main

    r = _run(
        "import sys; from panto.cli import main; sys.exit(main(sys.argv[1:]))", "lua", "--help"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: panto lua") and "-e stat" in r.stdout
    assert main is not None


@pytest.mark.parametrize(
    "args", [["lua", "-e", "print(1)"], ["lua", "-v"], ["extensions"], ["extensions", "--sync"]]
)
def test_without_lupa_one_line_no_traceback(args: list[str], tmp_path: Path) -> None:
    r = _run(NO_LUPA, *args, cwd=tmp_path)
    assert r.returncode in (1, 2), (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "lupa" in lines[0], r.stderr

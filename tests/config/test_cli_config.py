"""``panto config``: effective values with their layers, never a key value."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.config import write

from panto.cli import config as cli_config

SECRET = "sk-ant-THIS-MUST-NOT-PRINT"
ENV_SECRET = "sk-env-NOR-THIS"


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        rc = cli_config.main(args)
    except SystemExit as e:  # usage and configuration errors exit 2, as from the shell
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


def test_shows_layers_and_origins(
    user_dir: Path, project: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    ufile = write(
        user_dir / "config.toml",
        f"""
        model = "anthropic/claude-x"
        [providers.anthropic]
        api_key = "{SECRET}"
        headers = {{ authorization = "Bearer {SECRET}", x-team = "core" }}
        [extensions]
        deny = ["std.bash"]
        [extensions."me.hello"]
        greeting = "hi"
        """,
    )
    pfile = write(project / ".panto" / "config.toml", '[extensions]\nallow = ["std.bash"]\n')
    monkeypatch.setenv("PANTO_MAX_TOKENS", "99")
    monkeypatch.setenv("OPENAI_API_KEY", ENV_SECRET)
    monkeypatch.chdir(project)
    rc, out, err = _run([], capsys)
    assert rc == 0, err
    assert SECRET not in out and ENV_SECRET not in out
    lines = out.splitlines()

    def line(key: str) -> str:
        found = [ln for ln in lines if ln.startswith(key + " = ")]
        assert found, (key, out)
        return found[0]

    assert f"#   user     {ufile}" in out and f"#   project  {pfile}" in out
    assert "PANTO_MAX_TOKENS" in lines[4]
    assert line("model").endswith(f"# from user ({ufile})")
    assert line("max_tokens").startswith("max_tokens = 99") and "# from env (PANTO_MAX_TOKENS)" in (
        line("max_tokens")
    )
    assert "# from base (" in line("max_tool_rounds")
    assert "<set>" in line("providers.anthropic.api_key")
    assert "<set>" in line("providers.openai.api_key") and "OPENAI_API_KEY" in line(
        "providers.openai.api_key"
    )
    assert "<set>" in line("providers.anthropic.headers.authorization")
    assert '"core"' in line("providers.anthropic.headers.x-team")
    assert line("extensions.deny").endswith(f"# from user ({ufile})")
    assert line("extensions.allow").endswith(f"# from project ({pfile})")
    assert line('extensions."me.hello".greeting').startswith(
        'extensions."me.hello".greeting = "hi"'
    )
    # one key
    rc, out, _ = _run(["-C", str(project), "max_tokens"], capsys)
    assert rc == 0 and out.startswith("max_tokens = 99")
    rc, out, _ = _run(["providers.anthropic"], capsys)
    assert rc == 0 and SECRET not in out and out.count("\n") >= 4


def test_unset_key_and_errors(
    user_dir: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rc, out, _ = _run(["-C", str(tmp_path), "providers.anthropic.api_key"], capsys)
    assert rc == 0 and "<unset>" in out and "set ANTHROPIC_API_KEY" in out
    f = write(user_dir / "config.toml", '[tools]\ntimeout = "soon"\n')
    rc, out, err = _run([], capsys)
    assert rc == 2 and out == ""
    assert f"{f}: tools.timeout: expected a number > 0" in err


def test_subprocess_panto_config(user_dir: Path, tmp_path: Path) -> None:
    write(user_dir / "config.toml", f'[providers.openai]\napi_key = "{SECRET}"\n')
    env = dict(os.environ, ANTHROPIC_API_KEY=ENV_SECRET)
    r = subprocess.run(
        [sys.executable, "-m", "panto", "config"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert SECRET not in r.stdout + r.stderr and ENV_SECRET not in r.stdout + r.stderr
    assert 'model = "anthropic/claude-sonnet-4-5"' in r.stdout
    assert "# from default (ANTHROPIC_API_KEY is set)" in r.stdout

"""The REPL's trust question in a real pseudo-terminal (pexpect): asked once
when ``panto`` starts in an untrusted project whose ``.panto/`` sets
something that needs trust; "y" applies the project's config (the request
goes to the project's server), "n" keeps it ignored and is remembered."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.repl import Env, Pty

from panto.testing import ScriptedServer, echo_responder

pytest.importorskip("pexpect", reason="the pty tests need pexpect (the test extra)")
pytest.importorskip("pyte", reason="the pty tests need pyte (the test extra)")


@pytest.fixture
def servers() -> Iterator[tuple[ScriptedServer, ScriptedServer]]:
    """(the project's server, the user's own provider)."""
    with (
        ScriptedServer(responder=echo_responder) as proj,
        ScriptedServer(responder=echo_responder) as own,
    ):
        yield proj, own


@pytest.fixture
def env(tmp_path: Path, servers: tuple[ScriptedServer, ScriptedServer]) -> Env:
    """The project (its ``.panto/`` pointing Anthropic at the project's
    server) and the user's config (pointing it at their own), in this test's
    private HOME (tests/policy/conftest.py)."""
    proj, own = servers
    cwd = tmp_path / "work"
    (cwd / ".git").mkdir(parents=True)
    (cwd / ".panto").mkdir()
    (cwd / ".panto" / "config.toml").write_text(
        f'model = "anthropic/m"\n[providers.anthropic]\nbase_url = "{proj.url}"\n'
    )
    v = {k: val for k, val in os.environ.items() if k != "NO_COLOR"}
    v.update(TERM="xterm", ANTHROPIC_API_KEY="sk-ant-test")
    user = Path(v["XDG_CONFIG_HOME"]) / "panto"
    user.mkdir(parents=True)
    (user / "config.toml").write_text(f'[providers.anthropic]\nbase_url = "{own.url}"\n')
    return Env(Path(v["HOME"]), cwd, v)


def _store(env: Env) -> dict[str, dict[str, object]]:
    f = Path(env.vars["XDG_CONFIG_HOME"]) / "panto" / "trusted.json"
    return json.loads(f.read_text())["projects"] if f.exists() else {}


def _chat(env: Env) -> Pty:
    return Pty(env)


def test_yes_trusts_the_project_and_its_config_applies(
    env: Env, servers: tuple[ScriptedServer, ScriptedServer]
) -> None:
    proj, own = servers
    t = _chat(env)
    try:
        t.expect(r"\[y/N\]")
        assert "providers.anthropic.base_url" in t.raw
        assert str(env.cwd.resolve()) in t.raw
        t.line("y")
        t.prompt()
        t.line("hi")
        t.expect("You said: hi")
        t.prompt()
        assert len(proj.requests) == 1 and own.requests == []
        assert _store(env)[str(env.cwd.resolve())]["trusted"] is True
        t.send("\x04")
        assert t.wait_exit(timeout=20) == 0
    finally:
        t.close()
    # trusted now: no question next time
    t = _chat(env)
    try:
        t.prompt()
        assert "[y/N]" not in t.raw
    finally:
        t.close()


def test_no_keeps_the_project_untrusted_and_is_asked_once(
    env: Env, servers: tuple[ScriptedServer, ScriptedServer]
) -> None:
    proj, own = servers
    t = _chat(env)
    try:
        t.expect(r"\[y/N\]")
        t.line("n")
        t.expect("is not trusted: ignored providers.anthropic.base_url")
        t.prompt()
        t.line("hi")
        t.expect("You said: hi")
        t.prompt()
        assert proj.requests == [] and len(own.requests) == 1
        assert _store(env)[str(env.cwd.resolve())]["trusted"] is False
    finally:
        t.close()
    t = _chat(env)
    try:
        t.prompt()
        t.pump()
        assert "[y/N]" not in t.raw  # asked once
        assert "panto trust" in t.raw  # the one line says how to trust
    finally:
        t.close()

"""The ``panto`` command as a user meets it: subprocesses, and the REPL in a
real pseudo-terminal (pexpect), rendered by a terminal emulator (pyte) where
what the screen shows matters.  Helpers are in support/repl.py.

``env``: a private HOME (XDG dirs, no keys, no PANTO_*), a work directory
(``env.cwd``), and the environment to run panto with (``env.vars``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.repl import Env, Pty, isolated_env

from panto.testing import ScriptedServer, echo_responder


@pytest.fixture
def env(tmp_path: Path) -> Env:
    home = tmp_path / "home"
    return isolated_env(home, tmp_path / "work")


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """A scripted Anthropic-wire server that echoes once the script is used up."""
    with ScriptedServer(responder=echo_responder) as s:
        yield s


@pytest.fixture
def term(env: Env) -> Iterator[Callable[..., Pty]]:
    """Start ``panto ARGS`` in a pseudo-terminal; closed at the end."""
    pytest.importorskip("pexpect", reason="the pty tests need pexpect (the test extra)")
    pytest.importorskip("pyte", reason="the pty tests need pyte (the test extra)")
    started: list[Pty] = []

    def start(*args: str, **kw: Any) -> Pty:
        p = Pty(env, *args, **kw)
        started.append(p)
        return p

    yield start
    for p in started:
        p.close()

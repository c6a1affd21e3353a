"""Fixtures of the policy suite (trust, file modes, permissions): a private
HOME for each test (tests/conftest.py: isolated_home) and, for
subprocesses, its environment (``child_env``); ``env``, a private HOME (XDG
dirs, no keys, no PANTO_*) with a work directory, to run ``panto`` in;
``user_config(text)`` writes that HOME's user config.toml."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from support.repl import Env, isolated_env


@pytest.fixture(autouse=True)
def _isolated(isolated_home: Path) -> Path:
    return isolated_home


@pytest.fixture
def child_env(isolated_home: Path) -> dict[str, str]:
    """The environment of a ``panto`` subprocess: this test's HOME and XDG
    dirs, no API keys or ``PANTO_*`` (isolated_home removed them)."""
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    return env


@pytest.fixture
def env(tmp_path: Path) -> Env:
    home = tmp_path / "user-home"  # (isolated_home has tmp_path / "home")
    return isolated_env(home, tmp_path / "work")


@pytest.fixture
def user_config(env: Env) -> Callable[[str], Path]:
    def write(text: str) -> Path:
        d = Path(env.vars["XDG_CONFIG_HOME"]) / "panto"
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.toml").write_text(text)
        return d / "config.toml"

    return write

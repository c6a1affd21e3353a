"""Fixtures for the trust and file-mode tests: a private HOME for each test
(tests/conftest.py: isolated_home) and, for subprocesses, its environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


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

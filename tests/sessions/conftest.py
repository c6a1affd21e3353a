"""Fixtures for the session store tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated(isolated_home: Path) -> Path:
    """Every test runs in its own home (tests/conftest.py: isolated_home)."""
    return isolated_home


@pytest.fixture
def sessions_dir(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def workdir(tmp_path: Path) -> str:
    d = tmp_path / "project"
    d.mkdir()
    return str(d)

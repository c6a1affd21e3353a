"""Fixtures for the session store tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
try:  # an installed (editable) panto wins; otherwise the source tree
    import panto  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own XDG dirs: nothing touches the real home."""
    home = tmp_path / "home"
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        d = home / name.lower()
        d.mkdir(parents=True)
        monkeypatch.setenv(name, str(d))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PANTO_HOME", raising=False)
    return home


@pytest.fixture
def sessions_dir(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def workdir(tmp_path: Path) -> str:
    d = tmp_path / "project"
    d.mkdir()
    return str(d)

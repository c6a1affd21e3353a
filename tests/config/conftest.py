"""Fixtures for the layered config and extension-loading tests.

Every test runs in its own XDG home (nothing of the real user's config or
data is read) with the ``PANTO_*`` variables and API keys cleared.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
try:  # an installed panto wins; otherwise the source tree
    import panto  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        d = home / name.lower()
        d.mkdir(parents=True)
        monkeypatch.setenv(name, str(d))
    monkeypatch.setenv("HOME", str(home))
    for var in list(os.environ):
        if var.startswith("PANTO_") or var in (
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "LUAROCKS_CONFIG",
            "CC",
        ):
            monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def user_dir(isolated_home: Path) -> Path:
    d = Path(os.environ["XDG_CONFIG_HOME"]) / "panto"
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository (``.git``) with a ``.panto`` dir; returns the repo root."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".panto").mkdir()
    return root

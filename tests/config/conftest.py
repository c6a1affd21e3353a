"""Fixtures for the layered config and extension-loading tests.

Every test runs in its own XDG home (nothing of the real user's config or
data is read) with the ``PANTO_*`` variables and API keys cleared.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.trust import trust_project


@pytest.fixture(autouse=True)
def _isolated(isolated_home: Path) -> Path:
    """Every test runs in its own home (tests/conftest.py: isolated_home)."""
    return isolated_home


@pytest.fixture
def user_dir(isolated_home: Path) -> Path:
    d = Path(os.environ["XDG_CONFIG_HOME"]) / "panto"
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture
def project(tmp_path: Path, isolated_home: Path) -> Path:
    """A repository (``.git``) with a ``.panto`` dir, trusted (``panto
    trust``: its whole config and its extensions apply); returns the repo
    root.  tests/policy covers untrusted projects."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".panto").mkdir()
    trust_project(root)
    trust_project(root, {})  # for Config.load(env={}): its store is ~/.config/panto's
    return root

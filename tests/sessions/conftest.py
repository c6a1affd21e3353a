"""Fixtures for the session store tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


REPO = Path(__file__).resolve().parents[2]
# read now: the isolated_home fixture clears PANTO_* variables for each test
TEST_POSTGRES_URL = os.environ.get("PANTO_TEST_POSTGRES_URL")


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL server's URL: ``PANTO_TEST_POSTGRES_URL`` (tests/run_all.sh
    starts one), else a throwaway cluster started here with
    scripts/ci-postgres.sh; a skip, saying why, only when none can start."""
    url = TEST_POSTGRES_URL
    if url:
        yield url
        return
    state = tmp_path_factory.mktemp("pg") / "state.env"
    env = {**os.environ, "PANTO_PG_STATE": str(state)}
    script = [shutil.which("bash") or "/bin/bash", str(REPO / "scripts" / "ci-postgres.sh")]
    try:
        r = subprocess.run([*script, "start"], env=env, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"no PostgreSQL server could be started: {exc}")
    if r.returncode != 0 or "PANTO_TEST_POSTGRES_URL=" not in r.stdout:
        why = (r.stderr.strip() or r.stdout.strip())[-800:]
        pytest.skip(f"no PostgreSQL server could be started (scripts/ci-postgres.sh): {why}")
    url = r.stdout.strip().rpartition("PANTO_TEST_POSTGRES_URL=")[2].strip()
    try:
        yield url
    finally:
        subprocess.run([*script, "stop"], env=env, capture_output=True, timeout=120)


@pytest.fixture(params=["jsonl", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    from support.sessions import Backend

    from panto.sessions import open_backend

    kind = request.param
    if kind == "jsonl":
        url = str(tmp_path / "sessions")
    elif kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    yield Backend(kind, url, open_backend(url))
    if kind == "postgres":  # no pool threads outlive the test
        from panto.sessions.postgres import close_pools

        close_pools()

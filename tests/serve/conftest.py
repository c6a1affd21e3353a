"""A real ``panto serve`` subprocess in front of real loopback upstreams
(panto.testing.ScriptedServer, one per wire), for the official SDKs."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.serve import Served, start_serve, stop, write_config

from panto.testing import ScriptedServer

# read now: the isolated_home fixture clears PANTO_* variables for each test
ADMIN_URL = os.environ.get("PANTO_TEST_POSTGRES_URL")


@pytest.fixture
def served(isolated_home: Path, tmp_path: Path) -> Iterator[Served]:
    with ScriptedServer() as a, ScriptedServer() as o:
        write_config(isolated_home, a.base_url("anthropic-messages"), o.base_url("openai-chat"))
        env = {**os.environ, "PANTO_STARTUP_CACHE": "0"}
        proc, url, err = start_serve(env, tmp_path)
        try:
            yield Served(url, a, o, proc, err)
        finally:
            stop(proc)


@pytest.fixture
def database() -> Iterator[str]:
    """A fresh database on the test PostgreSQL server, dropped after."""
    if not ADMIN_URL:
        pytest.skip("PANTO_TEST_POSTGRES_URL is not set (tests/run_all.sh and .ci/run set it)")
    import psycopg

    name = f"panto_replicas_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    base, _, _ = ADMIN_URL.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

"""A real ``panto serve`` subprocess in front of real loopback upstreams
(panto.testing.ScriptedServer, one per wire), for the official SDKs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.serve import Served, start_serve, stop, write_config

from panto.testing import ScriptedServer


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

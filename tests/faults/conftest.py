"""Fixtures of the fault suite (issue 12): a raw-socket fault server and an
isolated HOME per run.  See server.py and faults_harness.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from faults_harness import make_home
from server import FaultServer


@pytest.fixture
def servers() -> Iterator[Callable[..., FaultServer]]:
    """``servers(behaviour_or_script, **kw)``: a started FaultServer, closed
    at teardown."""
    made: list[FaultServer] = []

    def make(script, **kw) -> FaultServer:  # type: ignore[no-untyped-def]
        s = FaultServer(script, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)

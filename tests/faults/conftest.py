"""Fixtures of the fault suite (issue 12): a raw-socket fault server and an
isolated HOME per run.  See support/fault_server.py and support/faults.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.fault_server import FaultServer
from support.faults import make_home


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

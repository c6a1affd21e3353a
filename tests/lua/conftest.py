"""Fixtures for the Lua runtime tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_PY = Path(__file__).resolve().parents[2] / "python"
try:  # an installed panto (tests/conftest.py imports it first) ...
    import panto  # noqa: F401
except ImportError:  # ... or the source tree (the Lua runtime needs no compiled core)
    sys.path.insert(0, str(_PY))

from lua_caller import Caller  # noqa: E402

from panto.lua import LuaRuntime, LuaToolSource, load_extensions  # noqa: E402


@pytest.fixture(scope="module")
def runtime() -> Iterator[LuaRuntime]:
    """A long-lived runtime with the std tools, shared by a test module."""
    rt = LuaRuntime()
    report = load_extensions(rt, no_extensions=True)
    assert not report.errors, report.errors
    yield rt
    rt.close()


@pytest.fixture
def fresh_runtime() -> Iterator[LuaRuntime]:
    rt = LuaRuntime()
    yield rt
    rt.close()


@pytest.fixture(scope="module")
def source(runtime: LuaRuntime) -> LuaToolSource:
    return LuaToolSource(runtime)


@pytest.fixture(scope="module")
def call(source: LuaToolSource) -> Caller:
    return Caller(source)

"""Fixtures for the Lua runtime tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.lua_caller import Caller

from panto.lua import LuaRuntime, LuaToolSource, load_extensions


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

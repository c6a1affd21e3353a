"""Fixtures for the extension policy and rocks tests.

The rocks tests need the system ``luarocks`` (3.8+), a C compiler and the
Lua 5.4 headers (Debian: ``apt-get install luarocks liblua5.4-dev gcc``);
without luarocks they are skipped with a message saying so.  They build a
local rock server once per session: rockspecs written here, packed with
``luarocks pack`` and indexed with ``luarocks-admin make-manifest``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from support.extensions import LUAROCKS, LUAROCKS_ADMIN, RockServer, build_rock_server


@pytest.fixture(autouse=True)
def _isolated(isolated_home: Path) -> Path:
    """Every test runs in its own home (tests/conftest.py: isolated_home)."""
    return isolated_home


@pytest.fixture(scope="session")
def lua_command() -> list[str] | None:
    """What ``bin/lua5.4`` execs: None is the default, ``python -m panto lua``."""
    if importlib.util.find_spec("panto.cli.lua") is None:
        pytest.skip("`panto lua` (panto.cli.lua) is missing: luarocks needs it as its interpreter")
    return None


@pytest.fixture(scope="session")
def rock_server(tmp_path_factory: pytest.TempPathFactory) -> RockServer:
    if LUAROCKS is None or LUAROCKS_ADMIN is None:
        pytest.skip("luarocks is not installed (apt-get install luarocks liblua5.4-dev)")
    return build_rock_server(tmp_path_factory.mktemp("rockserver"))


@pytest.fixture
def luarocks_log(tmp_path: Path) -> tuple[Path, Path]:
    """A ``luarocks`` shim directory for PATH that records every invocation
    and runs the real one: (shim dir, log file)."""
    if LUAROCKS is None:
        pytest.skip("luarocks is not installed")
    shim_dir = tmp_path / "shim"
    shim_dir.mkdir()
    log = tmp_path / "luarocks.log"
    shim = shim_dir / "luarocks"
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{LUAROCKS}" "$@"\n')
    shim.chmod(0o755)
    return shim_dir, log

"""Fixtures for the extension policy and rocks tests.

The rocks tests run the luarocks shipped with panto (no system luarocks);
the C rocks need a C compiler (the Lua headers ship with panto too).  They
build a local rock server once per session: rockspecs written here, packed
with ``panto rocks pack`` and indexed with ``panto rocks admin make-manifest``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from support.extensions import RockServer, build_rock_server, luarocks_recorder, needs_luarocks

from panto.extensions.rocks.toolchain import LUAROCKS_LAUNCHER


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
    if not LUAROCKS_LAUNCHER.is_file():
        pytest.skip(needs_luarocks.kwargs["reason"])
    return build_rock_server(tmp_path_factory.mktemp("rockserver"))


@pytest.fixture
def luarocks_log(tmp_path: Path) -> tuple[Path, Path]:
    """A ``luarocks`` for ``$PANTO_LUAROCKS`` that records every invocation
    and runs the one shipped with panto: (its directory, log file)."""
    log = tmp_path / "luarocks.log"
    shim = luarocks_recorder(tmp_path / "shim", log)
    return shim.parent, log

"""Fixtures for the extension policy and rocks tests.

The rocks tests need the system ``luarocks`` (3.8+), a C compiler and the
Lua 5.4 headers (Debian: ``apt-get install luarocks liblua5.4-dev gcc``);
without luarocks they are skipped with a message saying so.  They build a
local rock server once per session: rockspecs written here, packed with
``luarocks pack`` and indexed with ``luarocks-admin make-manifest``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
try:  # an installed (editable) panto wins; otherwise the source tree
    import panto  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))

from ext_helpers import LUAROCKS, LUAROCKS_ADMIN, RockServer, build_rock_server  # noqa: E402


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own XDG dirs: nothing touches the real home."""
    home = tmp_path / "home"
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        d = home / name.lower()
        d.mkdir(parents=True)
        monkeypatch.setenv(name, str(d))
    monkeypatch.setenv("HOME", str(home))
    for var in (
        "PANTO_HOME",
        "PANTO_LUAROCKS",
        "PANTO_LUA_INCDIR",
        "PANTO_ROCKS_NESTED",
        "CC",
        "LUAROCKS_CONFIG",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


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

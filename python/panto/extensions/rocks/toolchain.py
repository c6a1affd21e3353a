"""What installing rocks needs: luarocks, a C compiler, Lua 5.4 headers.

luarocks and the Lua 5.4 headers ship with panto (``vendor/``: see its
README.md); ``$PANTO_LUAROCKS`` picks another luarocks executable and
``$PANTO_LUA_INCDIR`` other headers.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

VENDOR = Path(__file__).resolve().parent / "vendor"
#: the luarocks Lua sources shipped with panto, run by ``panto lua``
LUAROCKS_DIR = VENDOR / "luarocks"
LUAROCKS_LAUNCHER = LUAROCKS_DIR / "launch.lua"
#: the Lua 5.4.8 headers shipped with panto (lupa's Lua)
SHIPPED_HEADERS = VENDOR / "lua-include"

HEADERS = ("lua.h", "luaconf.h", "lualib.h", "lauxlib.h", "lua.hpp")
#: Where Lua 5.4 headers are looked for, after $PANTO_LUA_INCDIR: panto's own
#: copy first, then a system one.
HEADER_DIRS = (
    str(SHIPPED_HEADERS),
    "/usr/include/lua5.4",
    "/usr/local/include/lua5.4",
    "/usr/local/include",
)

HINT_LUAROCKS = (
    "luarocks not found: $PANTO_LUAROCKS names no executable "
    "(unset it to use the luarocks shipped with panto)"
)
HINT_EMBEDDED = (
    f"luarocks not found: panto's own copy ({LUAROCKS_LAUNCHER}) is missing -- "
    "reinstall panto, or set PANTO_LUAROCKS to a luarocks 3.8+ executable"
)
HINT_HEADERS = (
    f"no Lua 5.4 headers: panto's own copy ({SHIPPED_HEADERS}) is missing -- "
    "reinstall panto, set PANTO_LUA_INCDIR, or apt-get install liblua5.4-dev"
)
HINT_CC = "no C compiler: apt-get install gcc (or set CC)"


# --------------------------------------------------------------------------
# toolchain


def python_command() -> list[str]:
    """This very Python, as a command."""
    return [sys.executable]


def default_lua_command() -> list[str]:
    """``panto lua`` as this very Python runs it."""
    return [*python_command(), "-m", "panto", "lua"]


def find_downloader(env: Mapping[str, str] | None = None) -> str | None:
    """``curl`` or ``wget`` on PATH (None: panto's urllib stand-in downloads)."""
    import shutil

    env = os.environ if env is None else env
    path = env.get("PATH")
    return shutil.which("curl", path=path) or shutil.which("wget", path=path)


def panto_pythonpath() -> str | None:
    """The directory holding the ``panto`` package, if a plain ``python -m
    panto`` would not find it (a source checkout on ``sys.path``)."""
    import site

    parent = str(Path(__file__).resolve().parents[3])  # .../panto/extensions/rocks/x.py
    known = set(site.getsitepackages()) | {site.getusersitepackages()}
    return None if parent in known else parent


def embedded_luarocks_command(*, admin: bool = False) -> list[str]:
    """The luarocks shipped with panto: ``panto lua launch.lua luarocks``."""
    which = "luarocks-admin" if admin else "luarocks"
    return [*default_lua_command(), str(LUAROCKS_LAUNCHER), which]


def embedded_luarocks_version() -> str | None:
    """The shipped luarocks' version, read from its sources (nothing spawned)."""
    try:
        text = (LUAROCKS_DIR / "luarocks" / "core" / "cfg.lua").read_text()
    except OSError:
        return None
    m = re.search(r'local program_version = "([^"]+)"', text)
    return m.group(1) if m else None


def find_luarocks(env: Mapping[str, str] | None = None) -> list[str] | None:
    """The luarocks command: ``$PANTO_LUAROCKS`` when set (None when it names
    no executable), else the copy shipped with panto (None if it is missing)."""
    import shutil

    env = os.environ if env is None else env
    given = env.get("PANTO_LUAROCKS")
    if given:
        found = shutil.which(given, path=env.get("PATH"))
        return [found] if found else None
    return embedded_luarocks_command() if LUAROCKS_LAUNCHER.is_file() else None


def luarocks_missing_hint(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    return HINT_LUAROCKS if env.get("PANTO_LUAROCKS") else HINT_EMBEDDED


def find_cc(env: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """(the compiler command luarocks should use, its resolved path or None).

    ``$CC`` when set (even if it does not exist: the build then fails with a
    clear message), else ``gcc``, ``cc`` or ``clang`` from ``PATH``.
    """
    import shlex
    import shutil

    env = os.environ if env is None else env
    path = env.get("PATH")
    cc = env.get("CC", "").strip()
    if cc:
        try:
            first = shlex.split(cc)[0]
        except (ValueError, IndexError):
            return cc, None
        return cc, shutil.which(first, path=path)
    for name in ("gcc", "cc", "clang"):
        found = shutil.which(name, path=path)
        if found:
            return name, found
    return None, None


def _lua_h_version(include: Path) -> int | None:
    try:
        text = (include / "lua.h").read_text(errors="replace")
    except OSError:
        return None
    m = re.search(r"#define\s+LUA_VERSION_NUM\s+(\d+)", text)
    return int(m.group(1)) if m else None


def find_lua_headers(env: Mapping[str, str] | None = None) -> Path | None:
    """A directory with the Lua 5.4 headers: ``$PANTO_LUA_INCDIR``, then the
    copy shipped with panto, then Debian's ``liblua5.4-dev``
    (``/usr/include/lua5.4``), then ``/usr/local``.

    5.4.x headers are ABI-compatible with lupa's 5.4.8 (FACTS.md); C modules
    are built without ``-llua`` and resolve the Lua API from lupa at load.
    """
    env = os.environ if env is None else env
    dirs = [env["PANTO_LUA_INCDIR"]] if env.get("PANTO_LUA_INCDIR") else []
    for d in (*dirs, *HEADER_DIRS):
        p = Path(d)
        if _lua_h_version(p) == 504 and all((p / h).is_file() for h in HEADERS[:4]):
            return p
    return None


@dataclass(unsafe_hash=True)
class Toolchain:
    """What building rocks needs, found (or not) on this machine.

    ``cc`` is the compiler command, ``cc_path`` where it resolved (None:
    missing); ``luarocks`` says which luarocks runs (None: missing); the
    others are paths or None.
    """

    luarocks: str | None
    luarocks_version: str | None
    cc: str | None
    cc_path: str | None
    make: str | None
    headers: Path | None
    downloader: str | None
    luarocks_hint: str = HINT_EMBEDDED

    @property
    def ok(self) -> bool:
        """luarocks is usable (C rocks may still lack a compiler or headers)."""
        return self.luarocks is not None and self.luarocks_version_ok

    @property
    def luarocks_version_ok(self) -> bool:
        if not self.luarocks_version:
            return self.luarocks is not None
        nums = [int(x) for x in re.findall(r"\d+", self.luarocks_version)[:2]]
        return nums >= [3, 8]

    def lines(self) -> list[tuple[bool, str]]:
        """(ok, text) per tool, for ``panto bootstrap`` to print."""
        out: list[tuple[bool, str]] = []
        if self.luarocks:
            v = self.luarocks_version or "unknown version"
            if self.luarocks_version_ok:
                out.append((True, f"luarocks     {self.luarocks} ({v})"))
            else:
                out.append((False, f"luarocks     {self.luarocks} ({v}): panto needs 3.8 or newer"))
        else:
            out.append((False, f"luarocks     missing -- {self.luarocks_hint}"))
        if self.cc_path:
            out.append((True, f"C compiler   {self.cc} ({self.cc_path})"))
        elif self.cc:
            out.append((False, f"C compiler   CC={self.cc} not found -- C rocks cannot build"))
        else:
            out.append((False, f"C compiler   missing -- C rocks cannot build ({HINT_CC})"))
        out.append(
            (True, f"make         {self.make}")
            if self.make
            else (False, "make         missing -- rocks built with make cannot build")
        )
        if self.headers:
            out.append((True, f"Lua headers  {self.headers}"))
        else:
            out.append((False, f"Lua headers  missing -- C rocks cannot build ({HINT_HEADERS})"))
        out.append(
            (True, f"downloader   {self.downloader or 'panto (Python urllib; no curl or wget)'}")
        )
        return out


def check_toolchain(env: Mapping[str, str] | None = None) -> Toolchain:
    """Look for luarocks (and run ``luarocks --version``), a C compiler,
    make, Lua 5.4 headers and curl/wget."""
    import shutil
    import subprocess

    env = os.environ if env is None else env
    path = env.get("PATH")
    cmd = find_luarocks(env)
    lr: str | None = None
    version = None
    if cmd and not env.get("PANTO_LUAROCKS"):
        lr = f"shipped with panto, run by `panto lua` ({LUAROCKS_DIR})"
        version = embedded_luarocks_version()
    elif cmd:
        lr = cmd[0]
        try:
            r = subprocess.run(
                [lr, "--version"], capture_output=True, text=True, timeout=30, env=dict(env)
            )
            m = re.search(r"(\d+\.\d+(?:\.\d+)?)", r.stdout)
            version = m.group(1) if m else None
        except (OSError, subprocess.SubprocessError):
            version = None
    cc, cc_path = find_cc(env)
    return Toolchain(
        luarocks=lr,
        luarocks_version=version,
        cc=cc,
        cc_path=cc_path,
        make=shutil.which("make", path=path),
        headers=find_lua_headers(env),
        downloader=find_downloader(env),
        luarocks_hint=luarocks_missing_hint(env),
    )

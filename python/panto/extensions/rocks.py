"""Rocks: ``extensions.rocks`` and the batteries manifest, installed by luarocks.

Layout (seed 000 Q3, ARCHITECTURE §8)::

    $PANTO_HOME/                      $PANTO_HOME or $XDG_DATA_HOME/panto
      rocks/lua-5.4.8/                the luarocks tree (--tree) and Lua prefix (--lua-dir)
        bin/lua5.4                    shell wrapper: exec <python> -m panto lua "$@"
        include/                      Lua 5.4 headers (copied from liblua5.4-dev)
        share/lua/5.4/  lib/lua/5.4/  installed modules
        lib/luarocks/rocks-5.4/NAME/VERSION/rock_manifest   what is installed
        luarocks-config.lua           servers + isolation (LUAROCKS_CONFIG)
        panto-batteries.json          what `panto bootstrap` installed

Startup calls :func:`sync`: it reads the tree's directories and returns at
once, without spawning anything, when every rock is present.  Otherwise it
runs the system ``luarocks`` (3.8+) for the missing ones only.  Nothing
here raises for an environment problem: every outcome -- luarocks missing,
no compiler, no headers, no network, a failing build -- is a
:class:`RockResult` with a clear ``message``, and the caller keeps going.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal

from ..paths import LUA_VERSION, panto_home
from ._record import Record
from .vers import Dependency, latest, parse_dep

__all__ = [
    "LUA_SHORT",
    "LUA_VERSION",
    "BatteriesManifest",
    "BootstrapReport",
    "RockResult",
    "RockTree",
    "Rocks",
    "SyncReport",
    "Toolchain",
    "bootstrap",
    "check_toolchain",
    "default_lua_command",
    "find_lua_headers",
    "load_manifest",
    "panto_home",
    "sync",
    "update",
]

LUA_SHORT = "5.4"
HEADERS = ("lua.h", "luaconf.h", "lualib.h", "lauxlib.h", "lua.hpp")
#: Where Lua 5.4 headers are looked for, after $PANTO_LUA_INCDIR.
HEADER_DIRS = ("/usr/include/lua5.4", "/usr/local/include/lua5.4", "/usr/local/include")

HINT_LUAROCKS = "luarocks not found: apt-get install luarocks (or set PANTO_LUAROCKS)"
HINT_HEADERS = "no Lua 5.4 headers: apt-get install liblua5.4-dev (or set PANTO_LUA_INCDIR)"
HINT_CC = "no C compiler: apt-get install gcc (or set CC)"

ErrorKind = Literal[
    "bad-spec",
    "luarocks-missing",
    "network",
    "not-found",
    "no-compiler",
    "no-headers",
    "build-failed",
    "timeout",
    "failed",
]
Action = Literal["present", "installed", "reinstalled", "removed", "kept", "failed"]

Progress = Callable[[str], None]

#: Set in luarocks' environment: a panto started by it (``bin/lua5.4`` ->
#: ``panto lua``) skips installing, so a sync never recurses.
NESTED_ENV = "PANTO_ROCKS_NESTED"


# --------------------------------------------------------------------------
# the tree


class RockTree(Record):
    """``$PANTO_HOME/rocks/lua-5.4.8``: a luarocks tree, also the ``--lua-dir``."""

    __slots__ = ("root",)
    _fields = ("root",)

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @classmethod
    def default(cls, home: Path | None = None) -> RockTree:
        return cls((home or panto_home()) / "rocks" / f"lua-{LUA_VERSION}")

    @property
    def rocks_dir(self) -> Path:
        return self.root / "lib" / "luarocks" / f"rocks-{LUA_SHORT}"

    @property
    def lua_wrapper(self) -> Path:
        return self.root / "bin" / f"lua{LUA_SHORT}"

    @property
    def include_dir(self) -> Path:
        return self.root / "include"

    @property
    def config_file(self) -> Path:
        return self.root / "luarocks-config.lua"

    @property
    def state_file(self) -> Path:
        return self.root / "panto-batteries.json"

    @property
    def lua_path(self) -> str:
        """What ``package.path`` needs to find the tree's Lua modules."""
        share = self.root / "share" / "lua" / LUA_SHORT
        return f"{share}/?.lua;{share}/?/init.lua"

    @property
    def lua_cpath(self) -> str:
        """What ``package.cpath`` needs to find the tree's C modules."""
        return f"{self.root / 'lib' / 'lua' / LUA_SHORT}/?.so"

    def installed_versions(self, name: str) -> list[str]:
        """Versions of ``name`` fully installed (their ``rock_manifest`` exists)."""
        try:
            it = os.scandir(self.rocks_dir / name)
        except OSError:
            return []
        with it:
            return sorted(
                e.name
                for e in it
                if e.is_dir() and os.path.exists(os.path.join(e.path, "rock_manifest"))
            )

    def installed(self) -> dict[str, list[str]]:
        try:
            names = [e.name for e in os.scandir(self.rocks_dir) if e.is_dir()]
        except OSError:
            return {}
        out = {n: self.installed_versions(n) for n in sorted(names)}
        return {n: v for n, v in out.items() if v}

    def satisfied(self, dep: Dependency) -> str | None:
        """An installed version that satisfies ``dep`` (None: the rock is missing)."""
        for v in reversed(self.installed_versions(dep.name)):
            if dep.matches(v):
                return v
        return None


# --------------------------------------------------------------------------
# toolchain


def default_lua_command() -> list[str]:
    """``panto lua`` as this very Python runs it."""
    return [sys.executable, "-m", "panto", "lua"]


def _panto_pythonpath() -> str | None:
    """The directory holding the ``panto`` package, if a plain ``python -m
    panto`` would not find it (a source checkout on ``sys.path``)."""
    import site

    import panto

    parent = str(Path(panto.__file__).resolve().parent.parent)
    known = set(site.getsitepackages()) | {site.getusersitepackages()}
    return None if parent in known else parent


def find_luarocks(env: Mapping[str, str] | None = None) -> str | None:
    import shutil

    env = os.environ if env is None else env
    given = env.get("PANTO_LUAROCKS")
    if given:
        return shutil.which(given, path=env.get("PATH")) or None
    return shutil.which("luarocks", path=env.get("PATH"))


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
    """A directory with the Lua 5.4 headers: ``$PANTO_LUA_INCDIR``, then
    Debian's ``liblua5.4-dev`` (``/usr/include/lua5.4``), then ``/usr/local``.

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


class Toolchain(Record):
    """What building rocks needs, found (or not) on this machine.

    ``cc`` is the compiler command, ``cc_path`` where it resolved (None:
    missing); the others are paths or None.
    """

    _fields = ("luarocks", "luarocks_version", "cc", "cc_path", "make", "headers", "downloader")
    __slots__ = _fields

    def __init__(
        self,
        luarocks: str | None,
        luarocks_version: str | None,
        cc: str | None,
        cc_path: str | None,
        make: str | None,
        headers: Path | None,
        downloader: str | None,
    ) -> None:
        self.luarocks = luarocks
        self.luarocks_version = luarocks_version
        self.cc = cc
        self.cc_path = cc_path
        self.make = make
        self.headers = headers
        self.downloader = downloader

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
            out.append((False, f"luarocks     missing -- {HINT_LUAROCKS}"))
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
            (True, f"downloader   {self.downloader}")
            if self.downloader
            else (False, "downloader   missing -- install curl or wget to fetch from https servers")
        )
        return out


def check_toolchain(env: Mapping[str, str] | None = None) -> Toolchain:
    """Look for luarocks (and run ``luarocks --version``), a C compiler,
    make, Lua 5.4 headers and curl/wget."""
    import shutil
    import subprocess

    env = os.environ if env is None else env
    path = env.get("PATH")
    lr = find_luarocks(env)
    version = None
    if lr:
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
        downloader=shutil.which("curl", path=path) or shutil.which("wget", path=path),
    )


# --------------------------------------------------------------------------
# results


class RockError(Record):
    """Why a rock is not installed; ``output``: luarocks' last lines, when it ran."""

    __slots__ = ("kind", "message", "output")
    _fields = ("kind", "message", "output")

    def __init__(self, kind: ErrorKind, message: str, output: str = "") -> None:
        self.kind: ErrorKind = kind
        self.message = message
        self.output = output


class RockResult(Record):
    """What happened to one rock."""

    __slots__ = ("action", "error", "name", "spec", "version")
    _fields = ("spec", "name", "action", "version", "error")

    def __init__(
        self,
        spec: str,
        name: str,
        action: Action,
        version: str | None = None,
        error: RockError | None = None,
    ) -> None:
        self.spec = spec
        self.name = name
        self.action: Action = action
        self.version = version
        self.error = error

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def message(self) -> str:
        if self.error:
            return self.error.message
        where = f" {self.version}" if self.version else ""
        return f"{self.name}{where} {self.action}"


class SyncReport(Record):
    """Every rock's result and how many luarocks processes ran."""

    __slots__ = ("results", "spawned")
    _fields = ("results", "spawned")

    def __init__(self, results: list[RockResult] | None = None, spawned: int = 0) -> None:
        self.results = results if results is not None else []
        self.spawned = spawned

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def errors(self) -> list[RockResult]:
        return [r for r in self.results if not r.ok]

    def messages(self) -> list[str]:
        return [r.message for r in self.errors]


# --------------------------------------------------------------------------
# running luarocks


_NETWORK_MARKERS = (
    "Failed searching manifest",
    "Failed fetching manifest",
    "Failed downloading",
    "Failed loading manifest",
    "connection refused",
    "Could not resolve",
    "Network is unreachable",
    "timed out",
)


def _tail(text: str, n: int = 12) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


def _indent(text: str) -> str:
    return "\n".join("    " + ln for ln in text.splitlines())


class _Run(Record):
    __slots__ = ("output", "rc")
    _fields = ("rc", "output")

    def __init__(self, rc: int, output: str) -> None:
        self.rc = rc
        self.output = output


class Rocks:
    """luarocks bound to one tree, its servers and panto's Lua prefix.

    ``servers`` empty means luarocks' defaults (luarocks.org); entries may be
    URLs or local directories (made with ``luarocks-admin make-manifest``).
    ``lua_command`` is what ``bin/lua5.4`` execs (default ``panto lua``).
    """

    def __init__(
        self,
        tree: RockTree | None = None,
        *,
        servers: Sequence[str] = (),
        luarocks: str | None = None,
        lua_command: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 900.0,
        progress: Progress | None = None,
    ) -> None:
        self.env = dict(os.environ if env is None else env)
        self.tree = tree or RockTree.default(panto_home(self.env))
        self.servers = [self._server(s) for s in servers]
        self.luarocks = luarocks if luarocks is not None else find_luarocks(self.env)
        self.lua_command = list(lua_command) if lua_command else default_lua_command()
        self.timeout = timeout
        self.progress = progress or (lambda _msg: None)
        self.spawned = 0
        self._prepared = False

    @staticmethod
    def _server(s: str) -> str:
        if "://" in s:
            return s
        return str(Path(s).expanduser().resolve())

    # -- the prefix -----------------------------------------------------

    def wrapper_text(self) -> str:
        import shlex

        # Must not contain the string luarocks uses to recognise its own
        # script wrappers: find_lua skips such files (FACTS.md).
        pp = _panto_pythonpath()
        lines = [
            "#!/bin/sh",
            "# Lua 5.4 for luarocks: panto's interpreter (`panto lua`).",
            "# Written by panto, rewritten whenever it differs; do not edit.",
        ]
        if pp:
            lines.append(f'PYTHONPATH={shlex.quote(pp)}"${{PYTHONPATH:+:$PYTHONPATH}}"')
            lines.append("export PYTHONPATH")
        lines.append("exec " + " ".join(shlex.quote(a) for a in self.lua_command) + ' "$@"')
        return "\n".join(lines) + "\n"

    def config_text(self) -> str:
        root = str(self.tree.root)
        lines = [
            "-- luarocks configuration for panto's tree; written by panto, do not edit.",
            f"rocks_trees = {{ {_lua_str(root)} }}",
            'deps_mode = "one"',
        ]
        if self.servers:
            lines.append("rocks_servers = { " + ", ".join(_lua_str(s) for s in self.servers) + " }")
        return "\n".join(lines) + "\n"

    def prepare(self) -> None:
        """Lay out the prefix: ``bin/lua5.4``, ``include/`` and the luarocks config."""
        if self._prepared:
            return
        root = self.tree.root
        root.mkdir(parents=True, exist_ok=True)
        _write_if_changed(self.tree.lua_wrapper, self.wrapper_text(), mode=0o755)
        _write_if_changed(self.tree.config_file, self.config_text())
        src = find_lua_headers(self.env)
        if src is not None:
            inc = self.tree.include_dir
            inc.mkdir(parents=True, exist_ok=True)
            for h in HEADERS:
                if (src / h).is_file():
                    data = (src / h).read_bytes()
                    if not (inc / h).is_file() or (inc / h).read_bytes() != data:
                        (inc / h).write_bytes(data)
            _write_if_changed(inc / "SOURCE", f"Lua headers copied by panto from {src}\n")
        self._prepared = True

    def _headers_present(self) -> bool:
        return (self.tree.include_dir / "lua.h").is_file()

    # -- running ----------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = dict(self.env)
        env.pop(f"LUAROCKS_CONFIG_{LUA_SHORT.replace('.', '_')}", None)
        env["LUAROCKS_CONFIG"] = str(self.tree.config_file)
        env[NESTED_ENV] = "1"  # `panto lua` run by luarocks must not sync rocks again
        return env

    def run(self, *args: str, timeout: float | None = None) -> _Run:
        """``luarocks --lua-version 5.4 --lua-dir T --tree T ARGS`` (output merged)."""
        import subprocess

        assert self.luarocks is not None
        self.prepare()
        root = str(self.tree.root)
        cmd = [self.luarocks, "--lua-version", LUA_SHORT, "--lua-dir", root, "--tree", root, *args]
        self.spawned += 1
        try:
            p = subprocess.run(
                cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                env=self._env(),
                timeout=timeout or self.timeout,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as e:
            out = e.output if isinstance(e.output, str) else (e.output or b"").decode("replace")
            return _Run(-1, out + f"\n(panto: luarocks timed out after {e.timeout:.0f} s)")
        except OSError as e:
            return _Run(-2, f"cannot run {self.luarocks}: {e}")
        return _Run(p.returncode, p.stdout)

    def _servers_text(self) -> str:
        return ", ".join(self.servers) if self.servers else "luarocks' default servers"

    def _classify(self, dep: Dependency, what: str, run: _Run) -> RockError:
        out = run.output
        tail = _tail(out)
        if run.rc == -1:
            return RockError("timeout", f"{what}: luarocks timed out\n{_indent(tail)}", tail)
        if run.rc == -2:
            return RockError("failed", f"{what}: {out}", out)
        if "Failed finding Lua header files" in out or ("lua.h" in out and "No such file" in out):
            return RockError("no-headers", f"cannot build {what}: {HINT_HEADERS}", tail)
        if "Failed compiling" in out or "Build error" in out or "Failed linking" in out:
            cc, cc_path = find_cc(self.env)
            if cc_path is None:
                why = f"CC={cc} not found" if cc else "cc/gcc not found"
                return RockError(
                    "no-compiler",
                    f"cannot build {what}: no C compiler ({why}) -- apt-get install gcc, or set CC",
                    tail,
                )
            return RockError("build-failed", f"{what} failed to build:\n{_indent(tail)}", tail)
        if "No results matching query" in out or "Could not find a result" in out:
            if any(m in out for m in _NETWORK_MARKERS):
                return self._network_error(dep, tail)
            return RockError(
                "not-found", f"no rock matches '{dep.spec}' on {self._servers_text()}", tail
            )
        if any(m in out for m in _NETWORK_MARKERS):
            return self._network_error(dep, tail)
        return RockError("failed", f"{what}: luarocks failed:\n{_indent(tail)}", tail)

    def _network_error(self, dep: Dependency, tail: str) -> RockError:
        return RockError(
            "network",
            f"could not reach {self._servers_text()} (no network?): '{dep.spec}' is not "
            "installed; panto retries on the next start",
            tail,
        )

    def search(self, dep: Dependency) -> tuple[list[str], RockError | None]:
        """Versions of ``dep.name`` on the servers, usable on this platform."""
        run = self.run("search", "--porcelain", dep.full_name, timeout=300)
        versions: list[str] = []
        archs = {"src", "rockspec", "all", _luarocks_arch()}
        for line in run.output.splitlines():
            cols = line.split("\t")
            if len(cols) >= 4 and cols[0] == dep.name and cols[2] in archs:
                versions.append(cols[1])
        if run.rc != 0:
            return [], self._classify(dep, f"searching '{dep.spec}'", run)
        if not versions and any(m in run.output for m in _NETWORK_MARKERS):
            return [], self._network_error(dep, _tail(run.output))
        return versions, None

    def resolve(self, dep: Dependency) -> tuple[str | None, RockError | None]:
        """The version luarocks would pick for ``dep`` (the highest that matches)."""
        versions, err = self.search(dep)
        if err:
            return None, err
        if not versions:
            return None, RockError(
                "not-found", f"no rock matches '{dep.spec}' on {self._servers_text()}"
            )
        pick = latest(versions, dep.constraints)
        if pick is None:
            have = ", ".join(sorted(set(versions))) or "none"
            return None, RockError(
                "not-found",
                f"no version of '{dep.name}' on {self._servers_text()} satisfies "
                f"'{dep.spec}' (available: {have})",
            )
        return pick, None

    def install(self, dep: Dependency, *, force: bool = False) -> RockResult:
        """Install ``dep``: an ``==`` pin directly, a range after resolving it."""
        if self.luarocks is None:
            return RockResult(
                dep.spec, dep.name, "failed", error=RockError("luarocks-missing", HINT_LUAROCKS)
            )
        if dep.exact:
            version = dep.constraints[0].version.string
        else:
            picked, err = self.resolve(dep)
            if err or picked is None:
                return RockResult(dep.spec, dep.name, "failed", error=err)
            version = picked
        what = f"rock '{dep.name} {version}'"
        self.progress(f"installing {dep.name} {version} ...")
        t0 = time.monotonic()
        args = ["install"]
        if force:
            args.append("--force")
        args += [dep.full_name, version]
        cc, _ = find_cc(self.env)
        if cc:
            args += [f"CC={cc}", f"LD={cc}"]
        with _locked(self.tree.root / ".panto-lock"):
            run = self.run(*args)
        if run.rc != 0:
            err = self._classify(dep, what, run)
            self.progress(f"  failed: {err.message.splitlines()[0]}")
            return RockResult(dep.spec, dep.name, "failed", version, err)
        got = self._installed_version(dep, run.output) or version
        self.progress(f"  {dep.name} {got} installed ({time.monotonic() - t0:.1f} s)")
        return RockResult(dep.spec, dep.name, "reinstalled" if force else "installed", got)

    def _installed_version(self, dep: Dependency, output: str) -> str | None:
        m = re.search(rf"^{re.escape(dep.name)} (\S+) is now installed", output, re.M)
        if m:
            return m.group(1)
        return self.tree.satisfied(dep)

    def remove(self, name: str, version: str) -> RockResult:
        spec = f"{name} {version}"
        if self.luarocks is None:
            return RockResult(
                spec, name, "failed", version, RockError("luarocks-missing", HINT_LUAROCKS)
            )
        self.progress(f"removing {name} {version} ...")
        with _locked(self.tree.root / ".panto-lock"):
            run = self.run("remove", name, version)
        if run.rc != 0:
            tail = _tail(run.output)
            return RockResult(
                spec,
                name,
                "failed",
                version,
                RockError("failed", f"could not remove {name} {version}:\n{_indent(tail)}", tail),
            )
        return RockResult(spec, name, "removed", version)


def _lua_str(s: str) -> str:
    level = 0
    while f"]{'=' * level}]" in s:
        level += 1
    eq = "=" * level
    return f"[{eq}[{s}]{eq}]"


def _write_if_changed(path: Path, text: str, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if path.read_text() == text:
            if mode is not None and (path.stat().st_mode & 0o777) != mode:
                path.chmod(mode)
            return
    except OSError:
        pass
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    if mode is not None:
        tmp.chmod(mode)
    os.replace(tmp, path)


def _luarocks_arch() -> str:
    import platform

    system = platform.system().lower()
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64" if system == "linux" else "arm64"}.get(
        machine, machine
    )
    if system == "darwin":
        system = "macosx"
    return f"{system}-{machine}"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One panto at a time installs into a tree."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# --------------------------------------------------------------------------
# sync / update


def _parse_all(specs: Iterable[str]) -> tuple[list[Dependency], list[RockResult]]:
    deps: list[Dependency] = []
    bad: list[RockResult] = []
    for spec in specs:
        try:
            deps.append(parse_dep(spec))
        except ValueError as e:
            s = spec if isinstance(spec, str) else repr(spec)
            bad.append(
                RockResult(s, s, "failed", error=RockError("bad-spec", f"bad rock '{s}': {e}"))
            )
    return deps, bad


def missing(specs: Iterable[str | Dependency], tree: RockTree | None = None) -> list[Dependency]:
    """The rocks with no installed version satisfying them (reads directories only).

    An exact pin is missing when that version is absent; a range or a bare
    name when no installed version matches it.
    """
    tree = tree or RockTree.default()
    deps = [s if isinstance(s, Dependency) else parse_dep(s) for s in specs]
    return [d for d in deps if tree.satisfied(d) is None]


def sync(
    specs: Iterable[str],
    *,
    servers: Sequence[str] = (),
    home: Path | None = None,
    force: bool = False,
    luarocks: str | None = None,
    lua_command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    timeout: float = 900.0,
) -> SyncReport:
    """Install the rocks in ``specs`` (luarocks dependency strings) that are missing.

    With ``force`` (``panto update``) every rock is re-resolved and
    reinstalled.  Without it, when everything is present this only reads
    directories -- luarocks is never spawned.  Never raises for a failing
    rock: see :attr:`SyncReport.results`.
    """
    env = dict(os.environ if env is None else env)
    tree = RockTree.default(home or panto_home(env))
    deps, results = _parse_all(specs)
    todo: list[Dependency] = []
    for d in deps:
        have = None if force else tree.satisfied(d)
        if have is None:
            todo.append(d)
        else:
            results.append(RockResult(d.spec, d.name, "present", have))
    report = SyncReport(results)
    if not todo:
        return report
    if env.get(NESTED_ENV):
        for d in todo:
            msg = f"'{d.spec}' is not installed (not installing from inside luarocks)"
            report.results.append(
                RockResult(d.spec, d.name, "failed", error=RockError("failed", msg))
            )
        return report
    rocks = Rocks(
        tree,
        servers=servers,
        luarocks=luarocks,
        lua_command=lua_command,
        env=env,
        progress=progress,
        timeout=timeout,
    )
    done: set[str] = set()
    for d in todo:
        have = None if force else tree.satisfied(d)  # an earlier install may satisfy it
        if have is not None or d.spec in done:
            report.results.append(RockResult(d.spec, d.name, "present", have or tree.satisfied(d)))
            continue
        done.add(d.spec)
        report.results.append(rocks.install(d, force=force))
    report.spawned = rocks.spawned
    return report


def update(specs: Iterable[str], **kwargs: object) -> SyncReport:
    """``panto update``: re-resolve and reinstall every rock."""
    return sync(specs, force=True, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# the batteries manifest and `panto bootstrap`

MANIFEST_PATH = Path(__file__).with_name("batteries.toml")
_EXACT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._]*-[0-9]+|scm-[0-9]+|dev-[0-9]+")


class BatteriesManifest(Record):
    """The rocks one panto release pins (seed 000 Q5): name -> version-revision."""

    __slots__ = ("lua_version", "path", "rocks")
    _fields = ("lua_version", "rocks", "path")

    def __init__(self, lua_version: str, rocks: Mapping[str, str], path: str = "") -> None:
        self.lua_version = lua_version
        self.rocks = rocks
        self.path = path

    def specs(self) -> list[str]:
        return [f"{n} == {v}" for n, v in self.rocks.items()]


def load_manifest(path: Path | str | None = None) -> BatteriesManifest:
    """Read and validate a batteries manifest (default: the one shipped)."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef, import-not-found, unused-ignore]
    from ..errors import ConfigError

    p = Path(path) if path is not None else MANIFEST_PATH
    try:
        data = tomllib.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(f"{p}: cannot read the batteries manifest: {e}") from None
    unknown = set(data) - {"lua_version", "rocks"}
    if unknown:
        raise ConfigError(f"{p}: unknown key(s) {sorted(unknown)}: expected lua_version, rocks")
    lua_version = data.get("lua_version", LUA_VERSION)
    if not isinstance(lua_version, str):
        raise ConfigError(f"{p}: lua_version: expected a string such as '{LUA_VERSION}'")
    rocks = data.get("rocks", {})
    if not isinstance(rocks, dict):
        raise ConfigError(f"{p}: rocks: expected a table of name = 'version-revision'")
    for name, version in rocks.items():
        if not isinstance(version, str) or not _EXACT.fullmatch(version):
            raise ConfigError(
                f"{p}: rocks.{name}: expected an exact 'version-revision' such as '1.51.0-1', "
                f"got {version!r}"
            )
    return BatteriesManifest(lua_version, dict(rocks), str(p))


class BootstrapReport(Record):
    """The toolchain found, the batteries and rocks synced, what was removed."""

    _fields = ("toolchain", "batteries", "rocks", "removed", "lua_mismatch", "removal_spawned")
    __slots__ = _fields

    def __init__(
        self,
        toolchain: Toolchain,
        batteries: SyncReport,
        rocks: SyncReport,
        removed: list[RockResult] | None = None,
        lua_mismatch: str | None = None,
        removal_spawned: int = 0,
    ) -> None:
        self.toolchain = toolchain
        self.batteries = batteries
        self.rocks = rocks
        self.removed = removed if removed is not None else []
        self.lua_mismatch = lua_mismatch
        self.removal_spawned = removal_spawned

    @property
    def ok(self) -> bool:
        return (
            self.batteries.ok
            and self.rocks.ok
            and all(r.ok for r in self.removed)
            and self.lua_mismatch is None
        )

    @property
    def spawned(self) -> int:
        return self.batteries.spawned + self.rocks.spawned + self.removal_spawned


def _read_state(tree: RockTree) -> dict[str, str]:
    import json

    try:
        data = json.loads(tree.state_file.read_text())
        rocks = data.get("installed", {})
        return {str(k): str(v) for k, v in rocks.items()} if isinstance(rocks, dict) else {}
    except (OSError, ValueError, AttributeError):
        return {}


def _write_state(tree: RockTree, installed: Mapping[str, str]) -> None:
    import json

    tree.root.mkdir(parents=True, exist_ok=True)
    _write_if_changed(
        tree.state_file,
        json.dumps({"installed": dict(sorted(installed.items()))}, indent=2) + "\n",
    )


def bootstrap(
    specs: Iterable[str] = (),
    *,
    manifest: BatteriesManifest | None = None,
    servers: Sequence[str] = (),
    home: Path | None = None,
    luarocks: str | None = None,
    lua_command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    toolchain: Toolchain | None = None,
) -> BootstrapReport:
    """``panto bootstrap``: check the toolchain, reconcile the batteries
    manifest (install missing pins, remove versions a previous bootstrap
    installed that the manifest no longer pins), then install missing
    ``extensions.rocks``.  ``toolchain``: an earlier :func:`check_toolchain`."""
    specs = list(specs)
    env = dict(os.environ if env is None else env)
    say = progress or (lambda _m: None)
    manifest = manifest or load_manifest()
    tree = RockTree.default(home or panto_home(env))
    tc = toolchain or check_toolchain(env)
    if luarocks is not None:
        tc.luarocks = luarocks
    kw: dict[str, object] = {
        "servers": servers,
        "home": home,
        "luarocks": luarocks,
        "lua_command": lua_command,
        "env": env,
        "progress": progress,
    }
    mismatch = None
    if manifest.lua_version != LUA_VERSION:
        mismatch = (
            f"{manifest.path}: the manifest pins Lua {manifest.lua_version} but panto "
            f"runs Lua {LUA_VERSION}; batteries were not installed"
        )
        batteries = SyncReport()
    else:
        say(f"batteries: {len(manifest.rocks)} pinned in {manifest.path}")
        batteries = sync(manifest.specs(), **kw)  # type: ignore[arg-type]

    # record what bootstrap owns, then drop what the manifest no longer pins
    state = _read_state(tree)
    for r in batteries.results:
        if r.ok and r.version:
            state[r.name] = r.version
    user_deps, _ = _parse_all(specs)
    removed: list[RockResult] = []
    spawned = 0
    if mismatch is None:
        remover: Rocks | None = None
        for name, version in sorted(state.items()):
            if manifest.rocks.get(name) == version:
                continue
            if version not in tree.installed_versions(name):
                del state[name]  # already gone (luarocks replaced it)
                continue
            if any(d.name == name and d.matches(version) for d in user_deps):
                del state[name]  # extensions.rocks wants it: no longer bootstrap's
                continue
            if remover is None:
                remover = Rocks(
                    tree,
                    servers=servers,
                    luarocks=luarocks,
                    lua_command=lua_command,
                    env=env,
                    progress=progress,
                )
            res = remover.remove(name, version)
            removed.append(res)
            if res.ok:
                del state[name]
        spawned = remover.spawned if remover is not None else 0
    if state or tree.state_file.exists():
        _write_state(tree, state)

    say(f"rocks: {len(user_deps)} in extensions.rocks")
    user = sync(specs, **kw)  # type: ignore[arg-type]
    return BootstrapReport(tc, batteries, user, removed, mismatch, spawned)

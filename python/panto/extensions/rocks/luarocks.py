"""Running luarocks (the copy shipped with panto, on ``panto lua``) into
panto's tree: results and the :class:`Rocks` runner."""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...paths import panto_home
from ..vers import Dependency, latest
from . import toolchain
from .toolchain import HEADERS, HINT_HEADERS
from .tree import LUA_SHORT, NESTED_ENV, Action, ErrorKind, Progress, RockTree

# --------------------------------------------------------------------------
# results


@dataclass(unsafe_hash=True)
class RockError:
    """Why a rock is not installed; ``output``: luarocks' last lines, when it ran."""

    kind: ErrorKind
    message: str
    output: str = ""


@dataclass(unsafe_hash=True)
class RockResult:
    """What happened to one rock."""

    spec: str
    name: str
    action: Action
    version: str | None = None
    error: RockError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def message(self) -> str:
        if self.error:
            return self.error.message
        where = f" {self.version}" if self.version else ""
        return f"{self.name}{where} {self.action}"


@dataclass(unsafe_hash=True)
class SyncReport:
    """Every rock's result and how many luarocks processes ran."""

    results: list[RockResult] | None = None
    spawned: int = 0

    def __post_init__(self) -> None:
        self.results = self.results if self.results is not None else []

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


@dataclass(unsafe_hash=True)
class _Run:
    rc: int
    output: str


class Rocks:
    """luarocks bound to one tree, its servers and panto's Lua prefix.

    ``servers`` empty means luarocks' defaults (luarocks.org); entries may be
    URLs or local directories (made with ``panto rocks admin make-manifest``).
    ``luarocks``: the luarocks command (an executable or an argv; default
    :func:`toolchain.find_luarocks`: the shipped copy run by ``panto lua``).
    ``lua_command`` is what ``bin/lua5.4`` execs (default ``panto lua``).
    """

    def __init__(
        self,
        tree: RockTree | None = None,
        *,
        servers: Sequence[str] = (),
        luarocks: str | Sequence[str] | None = None,
        lua_command: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 900.0,
        progress: Progress | None = None,
    ) -> None:
        self.env = dict(os.environ if env is None else env)
        self.tree = tree or RockTree.default(panto_home(self.env))
        self.servers = [self._server(s) for s in servers]
        self.luarocks: list[str] | None = (
            ([luarocks] if isinstance(luarocks, str) else list(luarocks))
            if luarocks is not None
            else toolchain.find_luarocks(self.env)
        )
        self.missing_hint = toolchain.luarocks_missing_hint(self.env)
        self.lua_command = list(lua_command) if lua_command else toolchain.default_lua_command()
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
        pp = toolchain.panto_pythonpath()
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
        if toolchain.find_downloader(self.env) is None:
            # neither curl nor wget: luarocks' curl calls go to panto's urllib stand-in
            fetch = [*toolchain.python_command(), "-m", "panto.extensions.rocks.fetch"]
            lines.append(f"variables.CURL = {_lua_str(_shell_join(fetch))}")
        return "\n".join(lines) + "\n"

    def prepare(self) -> None:
        """Lay out the prefix: ``bin/lua5.4``, ``include/`` and the luarocks config."""
        if self._prepared:
            return
        root = self.tree.root
        root.mkdir(parents=True, exist_ok=True)
        write_if_changed(self.tree.lua_wrapper, self.wrapper_text(), mode=0o755)
        write_if_changed(self.tree.config_file, self.config_text())
        src = toolchain.find_lua_headers(self.env)
        if src is not None:
            inc = self.tree.include_dir
            inc.mkdir(parents=True, exist_ok=True)
            for h in HEADERS:
                if (src / h).is_file():
                    data = (src / h).read_bytes()
                    if not (inc / h).is_file() or (inc / h).read_bytes() != data:
                        (inc / h).write_bytes(data)
            write_if_changed(inc / "SOURCE", f"Lua headers copied by panto from {src}\n")
        self._prepared = True

    def _headers_present(self) -> bool:
        return (self.tree.include_dir / "lua.h").is_file()

    # -- running ----------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = dict(self.env)
        env.pop(f"LUAROCKS_CONFIG_{LUA_SHORT.replace('.', '_')}", None)
        env["LUAROCKS_CONFIG"] = str(self.tree.config_file)
        env[NESTED_ENV] = "1"  # `panto lua` run by luarocks must not sync rocks again
        pp = toolchain.panto_pythonpath()  # the shipped luarocks runs `python -m panto lua`
        if pp:
            env["PYTHONPATH"] = pp + (
                os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
            )
        return env

    def command(self, *args: str, admin: bool = False) -> list[str]:
        """``luarocks --lua-version 5.4 --lua-dir T --tree T ARGS`` (``admin``:
        the shipped ``luarocks-admin``), with the prefix laid out."""
        self.prepare()
        root = str(self.tree.root)
        if admin:
            base = toolchain.embedded_luarocks_command(admin=True)
        else:
            assert self.luarocks is not None
            base = self.luarocks
        return [*base, "--lua-version", LUA_SHORT, "--lua-dir", root, "--tree", root, *args]

    def env_for_command(self) -> dict[str, str]:
        """The environment :meth:`command` runs in."""
        return self._env()

    def run(self, *args: str, timeout: float | None = None) -> _Run:
        """``luarocks --lua-version 5.4 --lua-dir T --tree T ARGS`` (output merged)."""
        import subprocess

        assert self.luarocks is not None
        cmd = self.command(*args)
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
            return _Run(-2, f"cannot run {' '.join(self.luarocks)}: {e}")
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
            cc, cc_path = toolchain.find_cc(self.env)
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
                dep.spec, dep.name, "failed", error=RockError("luarocks-missing", self.missing_hint)
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
        cc, _ = toolchain.find_cc(self.env)
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
                spec, name, "failed", version, RockError("luarocks-missing", self.missing_hint)
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


def _shell_join(argv: Sequence[str]) -> str:
    import shlex

    return " ".join(shlex.quote(a) for a in argv)


def _lua_str(s: str) -> str:
    level = 0
    while f"]{'=' * level}]" in s:
        level += 1
    eq = "=" * level
    return f"[{eq}[{s}]{eq}]"


def write_if_changed(path: Path, text: str, mode: int | None = None) -> None:
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

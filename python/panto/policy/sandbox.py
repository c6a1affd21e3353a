"""The OS sandbox for processes tools start (``std.bash`` and every
``panto.process.spawn``).

Modes (``[sandbox] mode``):

- ``workspace-write`` (the default): writes only beneath the working
  directory, a per-session ``TMPDIR`` (0700; ``XDG_CACHE_HOME``,
  ``npm_config_cache`` and ``PIP_CACHE_DIR`` point into it) and
  ``writable_roots``; the working directory's ``.git`` and ``.panto`` stay
  read-only unless ``allow_git_writes`` (then ``.git`` is writable except
  its ``config`` and ``hooks``); no network unless ``network = true``.
- ``read-only``: writes only in the session's ``TMPDIR``.
- ``off``: processes run as panto does.

Backends, tried in this order unless ``backend`` forces one:

- ``bwrap`` (bubblewrap on PATH, passing a probe): ``--ro-bind / /``, the
  writable roots bound writable, read-only paths bound back over them, fresh
  ``/dev`` and ``/proc``, new user, pid (``--die-with-parent``: when the
  command's bwrap dies, every process inside dies with it) and, with the
  network off, network namespaces.
- ``landlock`` (:mod:`panto.policy.landlock`): Landlock for writes, a user
  and mount namespace for the read-only paths, a network namespace.

When neither works a sandboxed spawn fails with :class:`SandboxUnavailable`,
one line naming the missing kernel feature and the fix.  The probe runs once
per process per backend choice (about 10 ms, on the first sandboxed spawn).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import errno
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BACKENDS",
    "MODES",
    "Launch",
    "Report",
    "Sandbox",
    "SandboxSettings",
    "SandboxUnavailable",
    "BLOCKED_NOTE",
    "blocked_note",
    "probe",
    "was_blocked",
]

MODES = ("workspace-write", "read-only", "off")
BACKENDS = ("auto", "bwrap", "landlock")

#: The first words of the note a tool result gets when the sandbox probably
#: blocked the command (:func:`was_blocked` looks for them).
BLOCKED_NOTE = "[sandbox: "

#: Paths beneath the working directory that stay read-only in workspace-write.
PROTECTED = (".git", ".panto")
#: With ``allow_git_writes``: the parts of ``.git`` that still stay read-only
#: (a hook or a config alias is code that runs outside the sandbox).
GIT_PROTECTED = ("config", "hooks")


class SandboxUnavailable(Exception):
    """No backend can confine processes here (the message says why and what to do)."""


@dataclass(frozen=True)
class SandboxSettings:
    """``[sandbox]`` of the config."""

    mode: str = "workspace-write"
    writable_roots: tuple[str, ...] = ()
    network: bool = False
    allow_git_writes: bool = False
    backend: str = "auto"

    @classmethod
    def from_config(cls, config: Any) -> SandboxSettings:
        """From a :class:`panto.config.Config` (its ``sandbox_*`` attributes)."""
        return cls(
            mode=config.sandbox_mode,
            writable_roots=tuple(config.sandbox_writable_roots or ()),
            network=bool(config.sandbox_network),
            allow_git_writes=bool(config.sandbox_allow_git_writes),
            backend=config.sandbox_backend,
        )


@dataclass
class Launch:
    """How to start one process: the argv (bwrap's prefix added), the
    environment and a ``preexec_fn`` (Landlock's confinement), and what to
    call once the process started (closes the ruleset)."""

    argv: list[str]
    env: dict[str, str]
    preexec_fn: Callable[[], None] | None = None
    started: Callable[[], None] = field(default=lambda: None)
    backend: str = "off"


# -- the probe -------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """What this machine offers (``panto config sandbox`` prints it)."""

    backend: str | None  # "bwrap" | "landlock" | None (none works)
    bwrap: str | None  # bwrap's path when it passed the probe
    bwrap_problem: str | None  # why bwrap is not used
    landlock_abi: int
    userns: bool
    problem: str | None  # when backend is None: the one line a spawn fails with
    bwrap_flags: tuple[str, ...] = ()


_probe_lock = threading.Lock()
_probes: dict[str, Report] = {}

# the namespace flags bwrap is run with; the first set that passes the probe
# is used (a container may refuse a fresh /proc: then the host's, read-only)
_BWRAP_BASE = ("--unshare-user", "--unshare-pid", "--die-with-parent", "--ro-bind", "/", "/")
_BWRAP_VARIANTS = (
    ("--dev", "/dev", "--proc", "/proc"),
    ("--dev", "/dev"),
)


def _probe_bwrap() -> tuple[str | None, str | None, tuple[str, ...]]:
    path = shutil.which("bwrap")
    if path is None:
        return None, "bwrap is not on PATH (install bubblewrap)", ()
    problem = ""
    for extra in _BWRAP_VARIANTS:
        argv = [path, *_BWRAP_BASE, *extra, "--unshare-net", "true"]
        try:
            r = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"bwrap failed to run: {e}", ()
        if r.returncode == 0:
            return path, None, (*_BWRAP_BASE, *extra)
        problem = r.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        problem = f"bwrap failed its probe: {problem[0]}"
    return None, problem, ()


def _probe_landlock() -> tuple[int, bool, str | None]:
    """(ABI, user namespaces work, problem)."""
    try:
        from . import landlock
    except (ImportError, OSError) as e:  # pragma: no cover - no ctypes
        return 0, False, f"Landlock is unavailable ({e})"
    abi = landlock.abi_version()
    if abi < 1:
        return 0, False, "the kernel has no Landlock (Linux 5.13+ with landlock in lsm=)"
    try:
        conf = landlock.Confinement([os.devnull], abi=abi)
    except OSError as e:
        return abi, False, f"Landlock failed: {e}"
    try:
        r = subprocess.run(
            ["true"],
            preexec_fn=conf.apply,  # noqa: PLW1509 - the point of the probe
            capture_output=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return abi, False, f"the Landlock probe failed: {e}"
    finally:
        conf.close()
    if r.returncode != 0:
        msg = r.stderr.decode(errors="replace").strip() or f"exit code {r.returncode}"
        return abi, False, f"user namespaces are unavailable ({msg})"
    return abi, True, None


def probe(backend: str = "auto") -> Report:
    """Which backend works here (cached per process and ``backend``)."""
    with _probe_lock:
        cached = _probes.get(backend)
        if cached is not None:
            return cached
        bwrap, bwrap_problem, flags = (None, 'not tried (backend = "landlock")', ())
        if backend in ("auto", "bwrap"):
            bwrap, bwrap_problem, flags = _probe_bwrap()
        abi, userns, ll_problem = 0, False, None
        if bwrap is None or backend == "landlock":
            abi, userns, ll_problem = _probe_landlock()
        else:
            from . import landlock

            abi = landlock.abi_version()
        chosen: str | None
        problem: str | None = None
        if bwrap is not None and backend != "landlock":
            chosen = "bwrap"
        elif backend != "bwrap" and ll_problem is None:
            chosen = "landlock"
        else:
            chosen = None
            why = bwrap_problem if backend == "bwrap" else ll_problem
            problem = (
                f'the sandbox cannot start: {why}; set [sandbox] mode = "off" to run '
                "commands without it"
            )
            if backend == "auto":
                problem = (
                    f"the sandbox cannot start: {bwrap_problem}, and {ll_problem}; install "
                    'bubblewrap, or set [sandbox] mode = "off" to run commands without it'
                )
        report = Report(
            chosen, bwrap, bwrap_problem, abi, userns or bwrap is not None, problem, flags
        )
        _probes[backend] = report
        return report


# -- the session's temporary directory ----------------------------------------------

_tmp_lock = threading.Lock()
_tmpdirs: list[str] = []


def _remove_tmpdirs() -> None:
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)


def _new_tmpdir() -> str:
    with _tmp_lock:
        if not _tmpdirs:
            atexit.register(_remove_tmpdirs)
        d = tempfile.mkdtemp(prefix="panto-sandbox-")  # 0700
        _tmpdirs.append(d)
        return d


# -- the sandbox of one session ---------------------------------------------------------


class Sandbox:
    """The sandbox a session's processes run in: the settings and the
    working directory (the workspace), with its own ``TMPDIR`` (made on the
    first spawn, removed when panto exits)."""

    def __init__(self, settings: SandboxSettings, cwd: str | None = None) -> None:
        self.settings = settings
        self.cwd = os.path.realpath(cwd or os.getcwd())
        self._tmpdir: str | None = None

    @classmethod
    def from_config(cls, config: Any, cwd: str | None = None) -> Sandbox:
        return cls(SandboxSettings.from_config(config), cwd)

    @property
    def enabled(self) -> bool:
        return self.settings.mode != "off"

    def with_mode(self, mode: str) -> Sandbox:
        """The same session's sandbox in another mode (``"off"``: a rerun the
        user approved; a permission mode may tighten it to ``"read-only"``).
        The session's TMPDIR is shared."""
        if mode not in MODES:
            raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, not {mode!r}")
        s = Sandbox(dataclasses.replace(self.settings, mode=mode), self.cwd)
        s._tmpdir = self._tmpdir
        return s

    def unsandboxed(self) -> Sandbox:
        """The same session with the sandbox off."""
        return self.with_mode("off")

    @property
    def tmpdir(self) -> str:
        if self._tmpdir is None or not os.path.isdir(self._tmpdir):
            self._tmpdir = _new_tmpdir()
        return self._tmpdir

    def report(self) -> Report:
        return probe(self.settings.backend)

    def env(self) -> dict[str, str]:
        """What the sandboxed process's environment gets: TMPDIR and caches under it."""
        t = self.tmpdir
        return {
            "TMPDIR": t,
            "XDG_CACHE_HOME": os.path.join(t, "cache"),
            "npm_config_cache": os.path.join(t, "npm"),
            "PIP_CACHE_DIR": os.path.join(t, "pip"),
        }

    def writable_roots(self) -> list[str]:
        """The directories writes may go to (existing ones, resolved)."""
        roots = [self.tmpdir]
        if self.settings.mode == "workspace-write":
            roots.append(self.cwd)  # the session's, not a spawn's own cwd
            for r in self.settings.writable_roots:
                p = os.path.expanduser(r)
                roots.append(os.path.realpath(os.path.join(self.cwd, p)))
        out: list[str] = []
        for r in roots:
            if r not in out and os.path.exists(r):
                out.append(r)
        return out

    def readonly_paths(self, roots: Sequence[str]) -> list[str]:
        """Paths beneath a writable root that stay read-only."""
        if self.settings.mode != "workspace-write":
            return []
        out: list[str] = []
        for root in roots:
            if root == self.tmpdir:
                continue
            for name in PROTECTED:
                p = os.path.join(root, name)
                if name == ".git" and self.settings.allow_git_writes:
                    out += [
                        os.path.join(p, g)
                        for g in GIT_PROTECTED
                        if os.path.lexists(os.path.join(p, g))
                    ]
                    continue
                if os.path.lexists(p) and p not in out:
                    out.append(p)
        return [p for p in out if os.path.exists(p)]

    def launch(self, argv: Sequence[str], env: Mapping[str, str], cwd: str | None) -> Launch:
        """How to start ``argv`` inside this sandbox.  Raises
        :class:`SandboxUnavailable` when no backend works here."""
        full = dict(env)
        if not self.enabled:
            return Launch(list(argv), full)
        rep = self.report()
        if rep.backend is None:
            raise SandboxUnavailable(rep.problem or "the sandbox cannot start")
        full.update(self.env())
        for k in ("XDG_CACHE_HOME", "npm_config_cache", "PIP_CACHE_DIR"):
            with contextlib.suppress(OSError):
                os.makedirs(full[k], mode=0o700, exist_ok=True)
        work = os.path.realpath(cwd or self.cwd)
        roots = self.writable_roots()
        readonly = self.readonly_paths(roots)
        network = self.settings.network
        if rep.backend == "bwrap":
            assert rep.bwrap is not None
            argv = list(argv)
            if argv and "/" not in argv[0]:
                # a missing program is Popen's FileNotFoundError, as unsandboxed
                # (callers fall back on it), not bwrap's "execvp" line
                found = shutil.which(argv[0], path=full.get("PATH", os.defpath))
                if found is None:
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", argv[0])
            pre = [rep.bwrap, *rep.bwrap_flags]
            for r in roots:
                pre += ["--bind", r, r]
            for p in readonly:
                pre += ["--ro-bind", p, p]
            if not network:
                pre.append("--unshare-net")
            if os.path.isdir(work):
                pre += ["--chdir", work]
            return Launch([*pre, "--", *argv], full, backend="bwrap")
        from . import landlock

        dev = [d for d in ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty") if os.path.exists(d)]
        dev += [d for d in ("/dev/shm", "/dev/pts") if os.path.isdir(d)]
        try:
            conf = landlock.Confinement(
                [*roots, *dev], readonly, network=network, abi=rep.landlock_abi
            )
        except OSError as e:
            raise SandboxUnavailable(
                f'the sandbox cannot start: {e}; set [sandbox] mode = "off" to run without it'
            ) from None
        return Launch(list(argv), full, conf.apply, conf.close, backend="landlock")

    def describe(self) -> str:
        """One line: the mode, where writes may go, the network."""
        s = self.settings
        if s.mode == "off":
            return "off"
        where = "the session's TMPDIR"
        if s.mode == "workspace-write":
            extra = ", writable_roots" if s.writable_roots else ""
            where = f"the working directory ({self.cwd}), the session's TMPDIR{extra}"
        net = "network on" if s.network else "network off"
        return f"{s.mode}: writes only in {where}; {net}"


# -- telling the model what happened -------------------------------------------------------

_FS_DENIED = re.compile(
    rb"Read-only file system|Permission denied|Operation not permitted|EACCES|EROFS|EPERM"
)
_NET_DENIED = re.compile(
    rb"Network is unreachable|Connection refused|Could not resolve host|"
    rb"Temporary failure in name resolution|Name or service not known|ENETUNREACH|"
    rb"getaddrinfo|No address associated|Failed to connect|Couldn't connect"
)


def blocked_note(sandbox: Sandbox | None, output: bytes, code: int | None) -> str | None:
    """When a sandboxed command failed with output that looks like the
    sandbox's doing (a denied write, no network), the note its tool result
    gets; else None.  Best effort: it reads the output."""
    if sandbox is None or not sandbox.enabled or code == 0:
        return None
    fs = bool(_FS_DENIED.search(output))
    net = not sandbox.settings.network and bool(_NET_DENIED.search(output))
    if not (fs or net):
        return None
    what = []
    if fs:
        what.append("a write outside the writable paths (or to .git/.panto) is refused")
    if net:
        what.append("the network is off")
    how = (
        "If the command must do this, say so to the user: they can rerun it outside the "
        "sandbox, or allow it in [sandbox] (writable_roots, network = true, "
        "allow_git_writes = true)."
    )
    return (
        f"{BLOCKED_NOTE}the command probably failed because the sandbox blocked it: "
        f"{' and '.join(what)} ({sandbox.describe()}). {how}]"
    )


def was_blocked(content: str) -> bool:
    """Does a tool result carry the sandbox-blocked note?"""
    return BLOCKED_NOTE + "the command probably failed because the sandbox" in content

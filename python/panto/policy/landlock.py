"""Landlock and namespaces through ctypes: the sandbox's second backend.

Linux only, no compiled code: the three Landlock system calls, ``unshare``,
``mount`` and ``prctl`` called through libc.  A :class:`Confinement` is
prepared in the parent (the Landlock ruleset is built there, where errors
can be reported); :meth:`Confinement.apply` runs in the child between
``fork`` and ``exec`` (``subprocess.Popen(preexec_fn=...)``) and does, in
order:

1. ``unshare(CLONE_NEWUSER | CLONE_NEWNS [| CLONE_NEWNET])`` and map the
   caller's own uid/gid (a new network namespace has only a loopback that is
   down: no connection leaves it, loopback included);
2. bind-mount each read-only path (``.git``, ``.panto``) over itself,
   read-only (Landlock cannot take write access away from a subpath of a
   writable root; a mount can);
3. ``PR_SET_NO_NEW_PRIVS`` and ``landlock_restrict_self``: writes are
   allowed only beneath the writable roots (reads and execution everywhere).

A failing step writes one line to the child's stderr and exits 126, so the
tool result says what failed instead of a bare "preexec_fn failed".
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Sequence

__all__ = ["Confinement", "abi_version", "WRITE_ACCESS"]

# system call numbers: the same on every architecture panto runs on
# (they were added after the syscall tables were unified)
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000

_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_NOATIME = 1024
_MS_NODIRATIME = 2048
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MS_RELATIME = 1 << 21
# statvfs f_flag bit -> the mount flag a remount must keep (a user namespace
# may not clear flags its parent's mount has: EPERM)
_LOCKED = (
    (os.ST_NOSUID, _MS_NOSUID),
    (os.ST_NODEV, _MS_NODEV),
    (os.ST_NOEXEC, _MS_NOEXEC),
    (getattr(os, "ST_NOATIME", 1024), _MS_NOATIME),
    (getattr(os, "ST_NODIRATIME", 2048), _MS_NODIRATIME),
    (getattr(os, "ST_RELATIME", 4096), _MS_RELATIME),
)

# filesystem access rights (linux/landlock.h)
_EXECUTE = 1 << 0
_WRITE_FILE = 1 << 1
_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_REMOVE_DIR = 1 << 4
_REMOVE_FILE = 1 << 5
_MAKE_CHAR = 1 << 6
_MAKE_DIR = 1 << 7
_MAKE_REG = 1 << 8
_MAKE_SOCK = 1 << 9
_MAKE_FIFO = 1 << 10
_MAKE_BLOCK = 1 << 11
_MAKE_SYM = 1 << 12
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3

#: Every write-like right of ABI 1 (the sandbox restricts only writes).
WRITE_ACCESS = (
    _WRITE_FILE
    | _REMOVE_DIR
    | _REMOVE_FILE
    | _MAKE_CHAR
    | _MAKE_DIR
    | _MAKE_REG
    | _MAKE_SOCK
    | _MAKE_FIFO
    | _MAKE_BLOCK
    | _MAKE_SYM
)
#: The rights that may be granted on a file (not a directory).
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is unavailable
    (an old kernel, or ``landlock`` missing from the ``lsm=`` boot list)."""
    try:
        n = _lib().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    except (OSError, AttributeError):  # pragma: no cover - no libc
        return 0
    return int(n) if n > 0 else 0


def _handled(abi: int) -> int:
    rights = WRITE_ACCESS
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    return rights


def _err(what: str) -> OSError:
    e = ctypes.get_errno()
    return OSError(e, f"{what}: {os.strerror(e)}")


class Confinement:
    """What one sandboxed child does before ``exec`` (see the module doc).

    ``writable``: directories (and files, e.g. ``/dev/null``) where writes
    are allowed; ``readonly``: paths bind-mounted read-only (they may lie
    beneath a writable root); ``network``: keep the host's network.
    Raises ``OSError`` when the ruleset cannot be built.
    """

    def __init__(
        self,
        writable: Sequence[str],
        readonly: Sequence[str] = (),
        *,
        network: bool = False,
        abi: int | None = None,
    ) -> None:
        self.abi = abi_version() if abi is None else abi
        if self.abi < 1:
            raise OSError(errno.ENOSYS, "Landlock is not available in this kernel")
        self.readonly = [os.fsencode(p) for p in readonly]
        self.network = network
        self.uid = os.getuid()
        self.gid = os.getgid()
        self.locked = {p: self._locked_flags(p) for p in self.readonly}
        lib = _lib()
        handled = _handled(self.abi)
        attr = _RulesetAttr(handled, 0, 0)
        fd = lib.syscall(
            _SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint32(0)
        )
        if fd < 0:
            raise _err("landlock_create_ruleset")
        self.fd = int(fd)
        try:
            for path in writable:
                self._allow(path, handled)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _locked_flags(path: bytes) -> int:
        try:
            f = os.statvfs(path).f_flag
        except OSError:
            return 0
        return sum(ms for st, ms in _LOCKED if f & st)

    def _allow(self, path: str, rights: int) -> None:
        try:
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # a root that does not exist grants nothing
        try:
            if not os.path.isdir(path):
                rights &= _FILE_RIGHTS
            rule = _PathBeneath(rights, pfd)
            r = _lib().syscall(
                _SYS_ADD_RULE, self.fd, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)
            )
            if r < 0:
                raise _err(f"landlock_add_rule({path})")
        finally:
            os.close(pfd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    # -- in the child, between fork and exec ---------------------------------

    def apply(self) -> None:
        """Confine the calling (single-threaded, just forked) process."""
        try:
            self._apply()
        except OSError as e:
            os.write(2, f"panto sandbox: {e.strerror or e}\n".encode())
            os._exit(126)

    def _apply(self) -> None:
        lib = _lib()
        flags = _CLONE_NEWUSER | _CLONE_NEWNS | (0 if self.network else _CLONE_NEWNET)
        if lib.unshare(flags) != 0:
            raise _err("unshare(user, mount, network namespaces)")
        _write(b"/proc/self/setgroups", b"deny")
        _write(b"/proc/self/uid_map", b"%d %d 1" % (self.uid, self.uid))
        _write(b"/proc/self/gid_map", b"%d %d 1" % (self.gid, self.gid))
        if self.readonly:
            if lib.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
                raise _err("mount(/, private)")
            for p in self.readonly:
                if lib.mount(p, p, None, _MS_BIND | _MS_REC, None) != 0:
                    raise _err(f"bind mount {p.decode(errors='replace')}")
                ro = _MS_REMOUNT | _MS_BIND | _MS_RDONLY | self.locked[p]
                if lib.mount(None, p, None, ro, None) != 0:
                    raise _err(f"read-only remount {p.decode(errors='replace')}")
        if lib.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _err("prctl(PR_SET_NO_NEW_PRIVS)")
        if lib.syscall(_SYS_RESTRICT_SELF, self.fd, ctypes.c_uint32(0)) != 0:
            raise _err("landlock_restrict_self")


def _write(path: bytes, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)

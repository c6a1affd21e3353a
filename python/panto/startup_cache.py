"""Start-up caches: what ``panto`` would otherwise recompute identically on
every start, kept under ``$XDG_CACHE_HOME/panto/<kind>/``.

- ``toml``: a parsed config file, keyed by its text (the TOML parser costs
  more to import than ``json``);
- ``extensions``: the built-in extensions' declarations (``panto.lua.lazy``);
- ``code``: the methods ``dataclasses`` generates, compiled
  (:func:`install_dataclass_code_cache`, installed by the ``panto`` command).

Also here, not caches but start-up work avoided the same way:
:func:`defer_inspect_import`, :func:`defer_urllib_parse_import`,
:func:`pause_gc`.

A key is a checksum of everything the value depends on, so an entry never
goes stale; a missing, unreadable or corrupt entry is recomputed.  The JSON
kinds keep at most ``MAX_FILES`` entries each.  ``PANTO_STARTUP_CACHE=0``
turns every one off (nothing is read or written).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

# (pathlib, through panto.paths, is imported when first needed: the ``panto``
# command defers urllib.parse before anything imports pathlib)

__all__ = [
    "MAX_FILES",
    "cache_dir",
    "checksum",
    "code_cache_stats",
    "defer_inspect_import",
    "defer_urllib_parse_import",
    "enabled",
    "install_dataclass_code_cache",
    "pause_gc",
    "resume_gc",
    "read",
    "remove",
    "write",
]

#: Entries kept per kind (the oldest are removed first).
MAX_FILES = 16


def enabled(env: Mapping[str, str] | None = None) -> bool:
    v = (os.environ if env is None else env).get("PANTO_STARTUP_CACHE", "")
    return v.strip().lower() not in ("0", "off", "false", "no")


def cache_dir(kind: str, env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/panto/<kind>``."""
    from .paths import xdg_cache_home

    return xdg_cache_home(env) / "panto" / kind


def _write_private(path: Path, data: bytes) -> None:
    """Write ``path`` (0600, its directories created 0700): cached config
    files may hold API keys, cached extension prompts what users wrote."""
    from .paths import open_private, private_dirs

    private_dirs(path.parent)
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def checksum(data: bytes) -> str:
    """A key for ``data``: two 32-bit checksums and the length.  Not
    hashlib (~2 ms to import with OpenSSL): keys guard against stale
    entries, not forgery (the cache directory is the user's own)."""
    import zlib

    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def read(kind: str, key: str) -> Any:
    """The entry's JSON value, or None."""
    if not enabled():
        return None
    try:
        return json.loads((cache_dir(kind) / f"{key}.json").read_bytes())
    except (OSError, ValueError):
        return None


def write(kind: str, key: str, value: Any) -> bool:
    """Store ``value`` (atomically); False when it could not be written."""
    if not enabled():
        return False
    d = cache_dir(kind)
    tmp = d / f".{key}.{os.getpid()}.tmp"
    try:
        _write_private(tmp, json.dumps(value, ensure_ascii=False).encode("utf-8"))
        os.replace(tmp, d / f"{key}.json")
        files = sorted(d.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
        for p in files[:-MAX_FILES]:
            p.unlink(missing_ok=True)
    except OSError:
        tmp.unlink(missing_ok=True)
        return False
    return True


def remove(kind: str, key: str) -> None:
    (cache_dir(kind) / f"{key}.json").unlink(missing_ok=True)


# -- dataclass code ----------------------------------------------------------------

_code_cache_installed = False
#: [texts found compiled, the list of texts compiled this run]
_code_stats: list[Any] = [0, []]
#: Above this many entries a save keeps only the texts this run used.
MAX_CODES = 2000


def code_cache_stats() -> tuple[int, int]:
    """(functions taken compiled from the cache, functions compiled) so far."""
    return _code_stats[0], len(_code_stats[1])


def install_dataclass_code_cache() -> bool:
    """Keep the functions ``dataclasses`` generates (``__init__``,
    ``__repr__``, ``__eq__``...) compiled between runs.

    ``@dataclass`` writes each method as source text and ``exec``\\ s it:
    for the ~45 dataclasses ``panto -p`` imports, parsing and compiling that
    text is a third of all the import work (~20 ms of CPU).  The same class
    definitions give the same text every run, so the compiled code objects
    are kept (``marshal``, in ``code/dataclasses-<key>.marshal``; the key is
    the Python version and the dataclasses module's file) and ``exec`` runs
    them instead: the result is the same function (compiling identical text
    with the same flags gives an identical code object).  Text not seen
    before is compiled as ever and saved at exit.

    Installed by the ``panto`` command at start (``panto.cli.main``), never
    by ``import panto``: a library's importer keeps its ``dataclasses``
    untouched.  Returns whether it is active."""
    global _code_cache_installed
    if _code_cache_installed:
        return True
    if not enabled():
        return False
    import builtins
    import dataclasses
    import marshal
    import sys

    try:
        st = os.stat(dataclasses.__file__)
    except (OSError, TypeError):
        return False
    stamp = f"{sys.version}\0{dataclasses.__file__}\0{st.st_mtime_ns}\0{st.st_size}"
    path = cache_dir("code") / f"dataclasses-{checksum(stamp.encode())}.marshal"
    codes: dict[str, Any] = {}
    try:
        loaded = marshal.loads(path.read_bytes())
        if isinstance(loaded, dict):
            codes = loaded
    except (OSError, ValueError, EOFError, TypeError):
        pass
    new: list[str] = []
    used: set[str] = set()
    real_exec = builtins.exec
    code_type = type(install_dataclass_code_cache.__code__)

    def cached_exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
        if type(source) is str:
            code = codes.get(source)
            if type(code) is not code_type:
                # dont_inherit: dataclasses' own exec inherits no __future__ flags
                code = compile(source, "<string>", "exec", dont_inherit=True)
                codes[source] = code
                new.append(source)
            else:
                _code_stats[0] += 1
            used.add(source)
            source = code
        real_exec(source, globals, locals)

    def save() -> None:
        if not new:
            return
        keep = codes
        if len(keep) > MAX_CODES:  # texts of other versions pile up: keep this run's
            keep = {k: v for k, v in codes.items() if k in used}
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            _write_private(tmp, marshal.dumps(keep))
            os.replace(tmp, path)
        except (OSError, ValueError):
            tmp.unlink(missing_ok=True)

    _code_stats[1] = new
    dataclasses.exec = cached_exec  # type: ignore[attr-defined]
    import atexit

    atexit.register(save)
    _code_cache_installed = True
    return True


# -- inspect, imported when first used ------------------------------------------------


def defer_inspect_import() -> bool:
    """Make ``import inspect`` cheap until ``inspect`` is really used.

    ``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``,
    ``tokenize``: ~7% of the instructions before ``panto -p``'s first byte)
    only to make a docstring for a dataclass that has none, which no panto
    dataclass lacks.  Until an attribute of it is first read, ``inspect`` in
    ``sys.modules`` is a stand-in; that first read imports the real module
    (replacing the stand-in in ``sys.modules``) and every read through the
    stand-in is forwarded to it.  The ``panto`` command calls this first
    (``panto.cli``), never ``import panto``.  False when ``inspect`` is
    already imported (nothing to defer) or the start-up caches are off."""
    import sys

    if "inspect" in sys.modules or not enabled():
        return False
    import types

    class _Deferred(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            if sys.modules.get(self.__name__) is self:
                del sys.modules[self.__name__]
            import importlib

            return getattr(importlib.import_module(self.__name__), name)

    sys.modules["inspect"] = _Deferred("inspect")
    return True


# -- urllib.parse, imported when first used -------------------------------------------


def defer_urllib_parse_import() -> bool:
    """Make ``import urllib.parse`` cheap until ``urllib.parse`` is really used.

    ``pathlib`` imports it (and with it ``ipaddress``: ~5% of the
    instructions before ``panto -p``'s first byte) for ``Path.as_uri`` alone;
    ``panto -p`` to an ``http://`` or ``https://`` provider parses no URL
    with it.  Until an attribute of it is first read, ``urllib.parse`` in
    ``sys.modules`` (and as ``urllib.parse``) is a stand-in whose
    ``quote_from_bytes`` (what ``pathlib`` takes) calls the real function;
    that first read imports the real module (replacing the stand-in in
    ``sys.modules`` and in ``urllib``) and every read through the stand-in
    is forwarded to it, so ``from urllib.parse import urlsplit`` and
    ``urllib.parse.urlsplit`` work as ever.  Called by the ``panto``
    command first (``panto.cli``), never by ``import panto``.  False when
    ``urllib.parse`` is already imported or the start-up caches are off."""
    import sys

    name = "urllib.parse"
    if name in sys.modules or not enabled():
        return False
    import types
    import urllib

    def real() -> types.ModuleType:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
        import importlib

        return importlib.import_module(name)

    class _Deferred(types.ModuleType):
        def __getattr__(self, attr: str) -> Any:
            if attr == "__path__":  # the import system's test for a package: it is none
                raise AttributeError(attr)
            return getattr(real(), attr)

    stand_in = _Deferred(name)

    def quote_from_bytes(bs: Any, safe: Any = "/") -> str:
        return real().quote_from_bytes(bs, safe)  # type: ignore[no-any-return]

    stand_in.quote_from_bytes = quote_from_bytes  # type: ignore[attr-defined]
    sys.modules[name] = stand_in
    urllib.parse = stand_in  # type: ignore[attr-defined]
    return True


# -- the cyclic garbage collector, paused while starting -------------------------------

#: [paused by pause_gc and not resumed yet, was enabled before]
_gc_state = [False, False]


def pause_gc() -> bool:
    """Stop the cyclic garbage collector until :func:`resume_gc`.

    Start-up creates some 100,000 objects that live as long as the process
    (modules, classes, functions) and almost no garbage cycles; the
    collector, run every 700 allocations, traverses them again and again:
    ~13% of the instructions before ``panto -p``'s first byte.  Reference
    counting frees everything else as ever.  The ``panto`` command calls
    this first and :func:`resume_gc` when the agent is built (or before a
    subcommand runs).  False when the collector was off already."""
    import gc

    if _gc_state[0] or not gc.isenabled():
        return False
    gc.disable()
    _gc_state[:] = [True, True]
    return True


def resume_gc() -> None:
    """Undo :func:`pause_gc` (nothing when it did not pause): what start-up
    created goes to the oldest generation untraversed (``gc.freeze`` then
    ``gc.unfreeze``: where collections would have promoted it, as it all
    survives) and the collector runs again."""
    if not _gc_state[0]:
        return
    import gc

    _gc_state[0] = False
    gc.freeze()
    gc.unfreeze()
    if _gc_state[1]:
        gc.enable()

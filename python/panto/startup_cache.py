"""Start-up caches: what ``panto`` would otherwise recompute identically on
every start, kept as JSON under ``$XDG_CACHE_HOME/panto/<kind>/<key>.json``.

Two kinds use it: ``toml`` (a parsed config file, keyed by its text: the
TOML parser costs more to import than ``json``) and ``extensions`` (the
built-in extensions' declarations, ``panto.lua.lazy``).  A key is a
checksum of everything the value depends on, so an entry never goes stale;
a missing, unreadable or corrupt entry is recomputed.  Each kind keeps at
most ``MAX_FILES`` entries.  ``PANTO_STARTUP_CACHE=0`` turns every one off
(nothing is read or written).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .paths import xdg_cache_home

__all__ = ["MAX_FILES", "cache_dir", "checksum", "enabled", "read", "remove", "write"]

#: Entries kept per kind (the oldest are removed first).
MAX_FILES = 16


def enabled(env: Mapping[str, str] | None = None) -> bool:
    v = (os.environ if env is None else env).get("PANTO_STARTUP_CACHE", "")
    return v.strip().lower() not in ("0", "off", "false", "no")


def cache_dir(kind: str, env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/panto/<kind>``."""
    return xdg_cache_home(env) / "panto" / kind


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
        d.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(value, ensure_ascii=False))
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

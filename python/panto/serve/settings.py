"""``[serve]``: where ``panto serve`` listens, who may call it, and the
model aliases it offers (docs/serve.md)."""

from __future__ import annotations

import hashlib
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError

__all__ = ["Alias", "ApiKey", "ServeSettings", "hash_key", "is_loopback"]

KEYS_ENV = "PANTO_SERVE_KEYS"


def hash_key(key: str) -> str:
    """How ``[serve.keys.NAME] sha256`` stores a key."""
    return hashlib.sha256(key.encode()).hexdigest()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ApiKey:
    """A client key: its name (for the ledger and sessions), the SHA-256 of
    the key, and the models it may use (None: all)."""

    name: str
    sha256: str = field(repr=False)
    models: tuple[str, ...] | None = None

    def allows(self, model: str) -> bool:
        return self.models is None or model in self.models


@dataclass(frozen=True)
class Alias:
    """``[serve.models.ALIAS]``: a name clients use, its target and the
    fallbacks tried, in order, before the first byte reaches the client."""

    name: str
    target: str
    fallbacks: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServeSettings:
    host: str = "127.0.0.1"
    port: int = 8765
    keys: tuple[ApiKey, ...] = ()
    aliases: Mapping[str, Alias] = field(default_factory=dict)
    #: seconds SIGTERM waits for streams in flight
    drain_timeout: float = 30.0
    #: connections kept per upstream base URL
    upstream_connections: int = 512
    #: directories agent sessions may work in (each with everything under
    #: it, symlinks resolved); empty: any directory
    roots: tuple[str, ...] = ()

    def session_cwd(self, requested: str | None) -> str:
        """The working directory of a new agent session: ``requested``
        (symlinks resolved), else the server's own.  Raises ``ValueError``
        naming the roots when it is outside every one of ``roots``."""
        cwd = os.path.realpath(os.path.expanduser(requested) if requested else os.getcwd())
        if self.roots and not any(
            cwd == r or cwd.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots
        ):
            raise ValueError(
                f"cwd {cwd!r} is outside the directories this server lets agent sessions "
                f"work in ([serve] roots: {', '.join(self.roots)}); use one of them or a "
                "directory under one"
            )
        return cwd

    @classmethod
    def from_config(
        cls, data: Mapping[str, Any], env: Mapping[str, str] | None = None
    ) -> ServeSettings:
        """From the merged ``[serve]`` table and ``PANTO_SERVE_KEYS``
        (comma-separated keys, each allowed every model)."""
        env = os.environ if env is None else env
        keys = [
            ApiKey(
                name,
                str(t.get("sha256", "")).lower(),
                tuple(t["models"]) if t.get("models") is not None else None,
            )
            for name, t in (data.get("keys") or {}).items()
        ]
        for i, k in enumerate(x.strip() for x in env.get(KEYS_ENV, "").split(",")):
            if k:
                keys.append(ApiKey(f"env-{i + 1}", hash_key(k)))
        for k in keys:
            if len(k.sha256) != 64 or any(c not in "0123456789abcdef" for c in k.sha256):
                raise ConfigError(
                    f"serve.keys.{k.name}.sha256: expected 64 hex digits "
                    "(`panto serve --hash-key` prints it for a key)"
                )
        aliases = {
            name: Alias(name, str(t["target"]), tuple(t.get("fallbacks") or ()))
            for name, t in (data.get("models") or {}).items()
        }
        return cls(
            host=str(data.get("host", cls.host)),
            port=int(data.get("port", cls.port)),
            keys=tuple(keys),
            aliases=aliases,
            drain_timeout=float(data.get("drain_timeout", cls.drain_timeout)),
            upstream_connections=int(data.get("upstream_connections", cls.upstream_connections)),
            roots=tuple(
                os.path.realpath(os.path.expanduser(str(r))) for r in data.get("roots") or ()
            ),
        )

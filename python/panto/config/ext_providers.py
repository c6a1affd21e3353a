"""Providers registered by extensions (``panto.provider.register`` in Lua).

A process-wide registry the config consults when a model names a provider
that is neither built in nor in ``[providers]``: extensions load only in
trusted projects (docs/security.md), so what is here came from code the
user chose to run.  The entries hold plain callables; this module knows
nothing of Lua (the Lua layer builds the callables, ``panto.providers``
calls them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ExtensionProvider",
    "get",
    "names",
    "register",
    "unregister",
]


@dataclass(frozen=True)
class ExtensionProvider:
    """One provider an extension registered.

    ``prepare`` (an HTTP provider on ``wire``): called once per request with
    ``{provider, model, wire, url, headers}`` (no key among the headers);
    returns ``{url?, headers?, api_key?}``.  ``respond`` (a provider that
    produces the turn itself): called once per request with ``{provider,
    model, system, messages, tools}`` and ``emit``, which it calls with each
    event as it happens (``{type="text"|"thinking"|"tool_call"|"usage"|"stop",
    ...}``); returns when the response is complete.
    Both block the calling thread (never call them on the Lua thread).
    """

    name: str
    wire: str
    base_url: str
    default_model: str
    prepare: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    respond: Callable[[Mapping[str, Any], Callable[[Any], None]], None] | None = None
    #: the extension entry that registered it (for messages)
    origin: str = "?"
    #: who may unregister it (the Lua state it lives in)
    owner: Any = None

    @property
    def produces_events(self) -> bool:
        return self.respond is not None


_lock = threading.Lock()
_registry: dict[str, ExtensionProvider] = {}


def register(p: ExtensionProvider) -> None:
    with _lock:
        _registry[p.name] = p


def get(name: str) -> ExtensionProvider | None:
    return _registry.get(name)


def names() -> list[str]:
    return sorted(_registry)


def unregister(owner: Any, origin: str | None = None) -> None:
    """Drop the providers of ``owner`` (only those of entry ``origin`` when given)."""
    with _lock:
        for n in [
            n
            for n, p in _registry.items()
            if p.owner == owner and (origin is None or p.origin == origin)
        ]:
            del _registry[n]

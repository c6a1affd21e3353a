"""``panto serve``: the ASGI app (the proxy routes across wires, models,
token counting, health), its settings and its usage ledger.  See
docs/serve.md."""

from __future__ import annotations

from .app import build_app
from .settings import ServeSettings, hash_key

__all__ = ["ServeSettings", "build_app", "hash_key"]

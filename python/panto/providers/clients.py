"""Async HTTP clients shared by every session of a process (or of a
``panto.app.Host``): one per event loop, origin and TLS settings.

A turn used to build its own ``httpx.AsyncClient`` and SSL context (~0.7 ms
and tens of KB per stream, and a leak when nobody closed it), and one
shared httpx client collapsed at 256 streams (httpcore's pool does work
growing with its open connections at every request start and finish).
``transport.async_client`` gives ``ahttp11.AsyncClient``: a pool of at most
``max_connections`` per origin, O(1) acquire and release, connections kept
alive across turns and sessions (httpx's only with a proxy configured).

The TLS and proxy settings of the environment are read at a URL's first
use (as httpx reads them when a client is made).  Clients belong to the
loop they were made on (their connections are its
transports): ``get(url)`` must run on a loop; clients of loops that have
closed are dropped when the next client is made.  ``close()`` closes every
client (from any thread: a client of a loop running in another thread is
closed on that loop).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

__all__ = ["AsyncClients", "default_async_clients"]

#: (scheme, host, port, TLS settings, proxy configured)
_Key = tuple[str, str, int, Any, bool]


class AsyncClients:
    """Clients by (event loop, origin, TLS settings).  ``max_connections``
    bounds each origin's pool (None: ``ahttp11.DEFAULT_MAX_CONNECTIONS``;
    clients made after a change use the new bound).  Making one imports
    nothing heavy: asyncio comes with the first client."""

    def __init__(self, max_connections: int | None = None) -> None:
        self.max_connections = max_connections
        self._by_loop: dict[int, tuple[asyncio.AbstractEventLoop, dict[_Key, Any]]] = {}
        self._lock = threading.Lock()
        #: url -> its key (``_key``)
        self._keys: dict[str, _Key] = {}
        self.closed = False

    def get(self, url: str) -> Any:
        """The client for ``url``'s origin on the running loop."""
        import asyncio

        loop = asyncio.get_running_loop()
        key = self._keys.get(url)
        if key is None:
            key = self._key(url)
        entry = self._by_loop.get(id(loop))
        if entry is not None and entry[0] is loop:
            client = entry[1].get(key)
            if client is not None and not client.is_closed:
                return client
        return self._make(loop, key)

    def _key(self, url: str) -> _Key:
        """``url``'s origin and the environment's TLS and proxy settings,
        read at the URL's first use, as httpx reads them when a client is
        made (each turn read them again: a tenth of a turn's start)."""
        from .http11 import split_url
        from .transport import proxy_configured

        scheme, host, port, _ = split_url(url)
        tls = (
            (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
            if scheme == "https"
            else None
        )
        key = (scheme, host, port, tls, proxy_configured())
        if len(self._keys) >= 256:  # (base URLs are few; a bound all the same)
            self._keys.clear()
        self._keys[url] = key
        return key

    def _make(self, loop: asyncio.AbstractEventLoop, key: _Key) -> Any:
        from .transport import async_client

        with self._lock:
            if self.closed:
                from .http11 import ConnectError

                raise ConnectError("the host's HTTP clients are closed")
            stale = [k for k, (lp, _) in self._by_loop.items() if lp.is_closed()]
            for k in stale:
                _, clients = self._by_loop.pop(k)
                for c in clients.values():
                    _close_quietly(c)
            entry = self._by_loop.get(id(loop))
            if entry is None or entry[0] is not loop:
                entry = self._by_loop[id(loop)] = (loop, {})
            client = entry[1].get(key)
            if client is None or client.is_closed:
                client = entry[1][key] = async_client(key[0] == "https", self.max_connections)
            return client

    def count(self) -> int:
        """How many clients are open (tests, diagnostics)."""
        return sum(len(c) for _, c in self._by_loop.values())

    def close(self) -> None:
        """Close every client (idle connections at once; a response being
        read keeps its connection until it is closed)."""
        with self._lock:
            self.closed = True
            entries, self._by_loop = list(self._by_loop.values()), {}
        if not entries:
            return
        import asyncio

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        for loop, clients in entries:
            for c in clients.values():
                if loop is running or loop.is_closed() or not loop.is_running():
                    _close_quietly(c)
                else:
                    try:
                        loop.call_soon_threadsafe(_close_quietly, c)
                    except RuntimeError:  # closed meanwhile
                        pass

    async def aclose(self) -> None:
        self.close()


def _close_quietly(client: Any) -> None:
    import asyncio

    try:
        close = getattr(client, "close", None)
        if close is not None and not asyncio.iscoroutinefunction(close):
            close()  # ahttp11.AsyncClient: synchronous
        else:  # httpx.AsyncClient: only aclose(), a coroutine
            loop = asyncio.get_running_loop()
            loop.create_task(client.aclose())
    except Exception:  # noqa: BLE001 - a loop that is gone: its sockets go with it
        pass


_default: AsyncClients | None = None
_default_lock = threading.Lock()


def default_async_clients() -> AsyncClients:
    """The clients of agents that no ``Host`` gave clients of its own."""
    global _default
    with _default_lock:
        if _default is None:
            _default = AsyncClients()
        return _default

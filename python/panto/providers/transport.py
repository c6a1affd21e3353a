"""The HTTP transport of a provider round, sync and async, and the one
scrubber for secrets.

Everything here is wire-independent: the provider classes (``base.py`` and
one module per wire) build the request; this module sends it (``send``, on
the client ``sync_client`` chose: the stdlib ``http11.Client``, or httpx's
when a proxy is configured; ``asend`` on ``async_client``'s:
``ahttp11.AsyncClient``, or httpx's with a proxy),
reads a bounded prefix of an error body (``read_error_body``),
picks the body iterator that undoes a content encoding (``body_chunks``),
maps transport errors (httpx's or ``http11``'s) to ``ProviderError``
(``transport_error``), wakes a reader
blocked on a socket (``shutdown_socket``), computes retry delays
(``retry_after_seconds``, ``backoff_delay``) and runs the watchdogs
(``Watch``: first byte, idle).

Secrets: every API key a provider is built with is registered here
(``register_secrets``), for as long as the provider lives (its ``owner``):
a process that serves many tenants scrubs the keys of the providers in use,
not every key it ever saw.  ``redact(text)`` replaces them in any text, and
every path that turns provider bytes into text a human or a file sees goes
through it (``scrub_error`` for exceptions).  ``install_log_redaction()``
scrubs every record logged on ``panto`` or any ``panto.*`` child logger,
whenever that logger was created; it runs at import when ``logging`` is
imported already, else when panto first uses ``logging``
(``panto.logs.on_logging_import``: panto logs only through ``panto.logs``,
so none of its records goes out before it).
"""

from __future__ import annotations

import heapq
import os
import sys
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import PantoError, ProviderError
from ..logs import get_logger, logging_module, on_logging_import
from ..patterns import LazyPattern

if TYPE_CHECKING:
    import logging

__all__ = [
    "ERROR_BODY_LIMIT",
    "PROXY_VARS",
    "aiter_reads",
    "async_client",
    "asend",
    "errors",
    "host_of",
    "proxy_configured",
    "send",
    "sync_client",
    "SECRET_PREFIX",
    "Watch",
    "backoff_delay",
    "body_chunks",
    "install_log_redaction",
    "logger",
    "read_error_body",
    "redact",
    "redact_headers",
    "register_secrets",
    "retry_after_seconds",
    "scrub_error",
    "shutdown_socket",
    "tls_verify",
    "transport_error",
]

logger = get_logger("panto")

#: At most this much of an HTTP error body is read (the rest is dropped).
ERROR_BODY_LIMIT = 64 * 1024

_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "proxy-authorization"})

# -- secrets ---------------------------------------------------------------------

_secrets: set[str] = set()  # registered without an owner: for good
_owned: dict[int, frozenset[str]] = {}  # id(owner) -> its secrets, while it lives
#: how many live owners hold each owned secret: the snapshot is rebuilt only
#: when the set of secrets changes (sessions sharing a key, the usual case,
#: cost no rebuild: with one per turn it grew with the providers alive)
_holders: dict[str, int] = {}
# reentrant: an owner's finalizer may run (garbage collection) while this
# thread holds it
_secrets_lock = threading.RLock()
_secrets_snapshot: tuple[str, ...] = ()


def register_secrets(secrets: Iterable[str], owner: object | None = None) -> None:
    """Remember strings ``redact`` must scrub (API keys): as long as
    ``owner`` (a provider) lives, or for good without one."""
    new = frozenset(s for s in secrets if s and len(s) >= 4)
    if not new:
        return
    with _secrets_lock:
        if owner is None:
            added = new - _secrets
            if not added:
                return
            _secrets.update(added)
            changed = any(s not in _holders for s in added)
        else:
            key = id(owner)
            old = _owned.get(key)
            if old is None:
                weakref.finalize(owner, _forget, key)
                old = frozenset()
            added = new - old
            _owned[key] = old | added
            changed = False
            for s in added:
                n = _holders.get(s, 0)
                _holders[s] = n + 1
                changed = changed or (n == 0 and s not in _secrets)
        if changed:
            _rebuild_snapshot()


def _forget(key: int) -> None:
    with _secrets_lock:
        gone = _owned.pop(key, None)
        if gone is None:
            return
        changed = False
        for s in gone:
            n = _holders[s] - 1
            if n:
                _holders[s] = n
            else:
                del _holders[s]
                changed = changed or s not in _secrets
        if changed:
            _rebuild_snapshot()


def _rebuild_snapshot() -> None:
    global _secrets_snapshot
    live = _secrets.union(_holders)
    # longest first: a key that contains another is replaced whole
    _secrets_snapshot = tuple(sorted(live, key=len, reverse=True))


def secret_header_values(headers: Mapping[str, str]) -> list[str]:
    """The values of headers that carry credentials (``Bearer`` stripped)."""
    out = []
    for k, v in headers.items():
        if k.lower() in _SECRET_HEADERS and v:
            out.append(v)
            if v.lower().startswith("bearer "):
                out.append(v[7:].strip())
    return out


#: A run of at least this many leading characters of a secret is scrubbed too
#: (providers echo key prefixes; error snippets cut a key short).
SECRET_PREFIX = 10


def redact(text: str, secrets: Sequence[str] | None = None) -> str:
    """``text`` with every registered secret (plus ``secrets``) replaced by
    ``***`` -- and any run of its first ``SECRET_PREFIX`` or more characters,
    which providers echo back and error snippets cut short."""
    if not text:
        return text
    todo: Sequence[str] = _secrets_snapshot
    if secrets:
        todo = (*secrets, *todo)
    todo = [s for s in todo if len(s) >= 4]
    # whole secrets first: two keys may share a prefix, and scrubbing one's
    # prefix first would cut the other short and leave its tail in the text
    for s in todo:
        if s in text:
            text = text.replace(s, "***")
    for s in todo:
        if len(s) > SECRET_PREFIX and s[:SECRET_PREFIX] in text:
            text = _scrub_prefixes(text, s)
    return text


def _scrub_prefixes(text: str, secret: str) -> str:
    head = secret[:SECRET_PREFIX]
    out: list[str] = []
    i = 0
    while True:
        j = text.find(head, i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        k = SECRET_PREFIX
        while k < len(secret) and j + k < len(text) and text[j + k] == secret[k]:
            k += 1
        out.append(text[i:j])
        out.append("***")
        i = j + k


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: ("***" if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()}


def scrub_error(err: PantoError, secrets: Sequence[str] | None = None) -> PantoError:
    """``err`` with ``redact`` applied to its message (the same object,
    changed in place, so a caller's ``raise`` keeps its traceback)."""
    if isinstance(err, ProviderError):
        clean = redact(err.message, secrets)
        if clean != err.message:
            err.message = clean
            err.args = (clean,)
        return err
    if err.args and isinstance(err.args[0], str):
        clean = redact(err.args[0], secrets)
        if clean != err.args[0]:
            err.args = (clean, *err.args[1:])
    return err


class _RedactingFilter:
    """Scrub registered secrets from a record's message and traceback (a
    logging filter: anything with a ``filter`` method is one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        _scrub_record(record)
        return True


def _scrub_record(record: logging.LogRecord) -> None:
    if not _secrets_snapshot:
        return
    msg = record.getMessage()
    clean = redact(msg)
    if clean != msg:
        record.msg, record.args = clean, None
    if record.exc_info and not record.exc_text:
        import traceback

        record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip())
    elif record.exc_text:
        record.exc_text = redact(record.exc_text)


_installed = False


def install_log_redaction() -> None:
    """Scrub secrets from every record logged on ``panto`` and on every
    ``panto.*`` child logger, those created later included (a filter on the
    ``panto`` logger alone misses records logged on children: filters do not
    propagate).  Idempotent."""
    global _installed
    if _installed:
        return
    _installed = True
    logging = logging_module()
    filt = _RedactingFilter()
    logger.addFilter(filt)
    for name, lg in list(logging.Logger.manager.loggerDict.items()):
        if name.startswith("panto.") and isinstance(lg, logging.Logger):
            lg.addFilter(filt)
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        name = record.name
        if name.startswith("panto") and (len(name) == 5 or name[5] == "."):
            _scrub_record(record)
        return record

    logging.setLogRecordFactory(factory)


# at panto's first use of ``logging`` (panto.logs), or now when it is imported already
on_logging_import(install_log_redaction)

# -- retries ------------------------------------------------------------------------


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """``retry-after-ms`` (OpenAI) or ``Retry-After`` as seconds or an HTTP
    date; None when absent or unparseable."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        import email.utils  # (a rare path: not imported at start-up)

        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(
    attempt: int, base: float, cap: float, retry_after: float | None, wait_max: float = 600.0
) -> float:
    """Exponential backoff with jitter (attempt counts from 1), never longer
    than ``wait_max``.  A ``Retry-After`` from the server wins (never
    shortened; callers give up instead of waiting more than ``wait_max``)."""
    if retry_after is not None:
        return min(retry_after, wait_max)
    import random  # (~1.5 ms: only when a retry waits)

    delay = min(cap, wait_max, base * (2 ** (attempt - 1)))
    return delay * (0.5 + random.random() / 2)


# -- HTTP -------------------------------------------------------------------------------


def timeouts(connect: float, read: float, first_byte: float | None) -> Any:
    """httpx timeouts for sending a request: until the response headers
    arrive the read timeout is ``first_byte`` when that is shorter
    (``body_started`` restores ``read`` for the body)."""
    import httpx

    head = read if first_byte is None else min(read, first_byte)
    return httpx.Timeout(head, connect=connect, pool=connect)


#: Environment variables naming a proxy (httpx honours them; ``http11`` does not).
PROXY_VARS = ("https_proxy", "http_proxy", "all_proxy")


def proxy_configured(env: Mapping[str, str] | None = None) -> bool:
    """A proxy is set in the environment (``HTTPS_PROXY``, ``HTTP_PROXY``,
    ``ALL_PROXY``, any case)."""
    env = os.environ if env is None else env
    return any(env.get(v) or env.get(v.upper()) for v in PROXY_VARS)


def ssl_context() -> Any:
    """The verifying TLS context of an https client (see ``tls_verify``):
    the system's hashed CA directory, read lazily; else the bundle named by
    ``SSL_CERT_FILE``, else certifi's (httpx's default), else OpenSSL's
    default paths.  ``SSL_CERT_DIR`` is added when set."""
    import ssl

    v = tls_verify(True)
    if isinstance(v, ssl.SSLContext):
        return v
    cafile = os.environ.get("SSL_CERT_FILE")
    if not (cafile and os.path.isfile(cafile)):
        try:
            import certifi

            cafile = certifi.where()
        except ImportError:
            cafile = None
    ctx = ssl.create_default_context(cafile=cafile)
    capath = os.environ.get("SSL_CERT_DIR")
    if capath and os.path.isdir(capath):
        ctx.load_verify_locations(capath=capath)
    return ctx


def sync_client(https: bool) -> Any:
    """The sync agent's HTTP client: ``http11.Client`` (the standard
    library), or ``httpx.Client`` when a proxy is configured (httpx speaks
    to it).  ``https``: the provider is https, so the verifying TLS context
    is made now (an http client makes one only if an https request comes)."""
    if proxy_configured():
        import httpx

        return httpx.Client(http2=False, follow_redirects=False, verify=tls_verify(https))
    from .http11 import Client

    return Client(ssl_context, ssl_context=ssl_context() if https else None)


def async_client(https: bool, max_connections: int | None = None) -> Any:
    """An async HTTP client for one event loop: ``ahttp11.AsyncClient``
    (per-origin pools of at most ``max_connections``), or
    ``httpx.AsyncClient`` when a proxy is configured (httpx speaks to it).
    ``https``: make the verifying TLS context now (else on the first https
    request)."""
    from .ahttp11 import DEFAULT_MAX_CONNECTIONS

    size = max_connections or DEFAULT_MAX_CONNECTIONS
    if proxy_configured():
        import httpx

        limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
        return httpx.AsyncClient(
            http2=False, follow_redirects=False, verify=tls_verify(https), limits=limits
        )
    from .ahttp11 import AsyncClient

    return AsyncClient(
        ssl_context, ssl_context=ssl_context() if https else None, max_connections=size
    )


async def asend(
    client: Any,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    connect: float,
    read: float,
    first_byte: float | None,
) -> Any:
    """``send`` on an async client (``async_client``'s): the response once
    its head is in (read its body with ``abody_chunks``; ``aclose`` it)."""
    head = read if first_byte is None else min(read, first_byte)
    hdrs = prepare_headers(headers)
    from .ahttp11 import AsyncClient
    from .http11 import ReadTimeout

    if isinstance(client, AsyncClient):
        try:
            return await client.send(
                "POST",
                url,
                headers=hdrs,
                body=body,
                connect_timeout=connect,
                head_timeout=head,
                read_timeout=read,
            )
        except ReadTimeout:
            if first_byte is not None and first_byte < read:
                raise stall_error("first_byte", host_of(url), first_byte) from None
            raise
    import httpx

    request = client.build_request(
        "POST", url, content=body, headers=hdrs, timeout=timeouts(connect, read, first_byte)
    )
    try:
        resp = await client.send(request, stream=True)
    except httpx.ReadTimeout:
        if first_byte is not None and first_byte < read:
            raise stall_error("first_byte", host_of(url), first_byte) from None
        raise
    body_started(request, read)
    return resp


def errors() -> tuple[type[BaseException], ...]:
    """The transport exceptions a round may raise: ``http11``'s, and
    httpx's once httpx is loaded (evaluated where it is caught)."""
    from .http11 import HTTPError

    httpx = sys.modules.get("httpx")
    if httpx is not None:
        return (HTTPError, httpx.HTTPError)
    return (HTTPError,)


def host_of(url: str) -> str:
    """The host of ``url`` (for messages)."""
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).hostname or url
    except ValueError:
        return url


def send(
    client: Any,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    connect: float,
    read: float,
    first_byte: float | None,
) -> Any:
    """POST ``body`` and return the response once its head is in (its body
    is read with ``body_chunks``).  Until then reads wait at most
    ``first_byte`` (when shorter than ``read``): a server that says nothing
    is a retryable ``first_byte_timeout``; the body's reads wait ``read``."""
    head = read if first_byte is None else min(read, first_byte)
    hdrs = prepare_headers(headers)
    from .http11 import Client, ReadTimeout

    if isinstance(client, Client):
        try:
            return client.send(
                "POST",
                url,
                headers=hdrs,
                body=body,
                connect_timeout=connect,
                head_timeout=head,
                read_timeout=read,
            )
        except ReadTimeout:
            if first_byte is not None and first_byte < read:
                raise stall_error("first_byte", host_of(url), first_byte) from None
            raise
    import httpx

    request = client.build_request(
        "POST", url, content=body, headers=hdrs, timeout=timeouts(connect, read, first_byte)
    )
    try:
        resp = client.send(request, stream=True)
    except httpx.ReadTimeout:
        if first_byte is not None and first_byte < read:
            raise stall_error("first_byte", host_of(url), first_byte) from None
        raise
    body_started(request, read)
    return resp


def body_started(request: Any, read: float) -> None:
    """The headers are in: the body's reads get the plain ``read`` timeout.
    (httpcore reads ``request.extensions["timeout"]`` when the body
    iteration starts.)"""
    t = request.extensions.get("timeout")
    if isinstance(t, dict):
        t["read"] = read


def prepare_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Request headers plus ``accept-encoding: identity`` (an event stream
    is not worth compressing; ``body_chunks`` still decodes one that is)."""
    h = dict(headers)
    if not any(k.lower() == "accept-encoding" for k in h):
        h["accept-encoding"] = "identity"
    return h


def _encoded(resp: Any) -> bool:
    enc = resp.headers.get("content-encoding")
    return bool(enc) and enc.strip().lower() != "identity"


def body_chunks(resp: Any) -> Iterator[bytes]:
    """The response body as bytes for the decoder: raw when it is not
    content-encoded (the fast path), decoded (gzip, deflate, ...) when it is."""
    return resp.iter_bytes() if _encoded(resp) else resp.iter_raw()


def abody_chunks(resp: Any) -> Any:
    return resp.aiter_bytes() if _encoded(resp) else resp.aiter_raw()


def aiter_reads(resp: Any) -> Any:
    """A response's raw body as it arrives: one item per network read on
    ``ahttp11`` (everything since the last one), the raw chunks on httpx."""
    reads = getattr(resp, "aiter_reads", None)
    return reads() if reads is not None else resp.aiter_raw()


def read_error_body(resp: Any, limit: int = ERROR_BODY_LIMIT) -> bytes:
    """At most ``limit`` bytes of an (error) response body, decoded."""
    buf = bytearray()
    for chunk in resp.iter_bytes():
        buf += chunk
        if len(buf) >= limit:
            break
    return bytes(buf[:limit])


async def aread_error_body(resp: Any, limit: int = ERROR_BODY_LIMIT) -> bytes:
    buf = bytearray()
    async for chunk in resp.aiter_bytes():
        buf += chunk
        if len(buf) >= limit:
            break
    return bytes(buf[:limit])


def is_json(resp: Any) -> bool:
    """A 200 whose body is JSON is an error object, not an event stream."""
    ctype = resp.headers.get("content-type", "").lower()
    return "json" in ctype and "event-stream" not in ctype


def shutdown_socket(resp: Any) -> None:
    """Wake a thread blocked reading ``resp`` (closing alone may not)."""
    own = getattr(resp, "shutdown_socket", None)
    if own is not None:  # an http11.Response
        own()
        return
    import socket

    try:
        ns = resp.extensions.get("network_stream")
        sock = ns.get_extra_info("socket") if ns is not None else None
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except Exception:
        pass


def transport_error(
    exc: Exception, url: str, connect: float, read: float, secrets: Sequence[str] = ()
) -> PantoError:
    """The ``ProviderError`` (retryable) for a transport error (httpx's or
    ``http11``'s: the same class names, the same messages)."""
    from . import http11

    if isinstance(exc, http11.HTTPError):
        mod: Any = http11
    else:
        import httpx as mod
    host = host_of(url)
    if isinstance(exc, mod.ConnectTimeout):
        msg, kind = f"connecting to {host} timed out after {connect:g}s", "connect_timeout"
    elif isinstance(exc, mod.ConnectError):
        msg, kind = f"could not connect to {url}: {exc}", "connection_error"
    elif isinstance(exc, mod.ReadTimeout):
        msg, kind = f"no data from {host} for {read:g}s (read timeout)", "read_timeout"
    elif isinstance(exc, mod.TimeoutException):
        msg, kind = f"timed out talking to {host}: {exc}", "timeout"
    elif isinstance(exc, (mod.RemoteProtocolError, mod.ReadError, mod.WriteError)):
        msg, kind = (
            f"the connection to {host} broke before the response was complete ({exc})",
            "connection_closed",
        )
    else:
        msg, kind = f"HTTP error talking to {host}: {exc}", "transport_error"
    return ProviderError(redact(msg, secrets), type=kind, retryable=True)


def stall_error(kind: str, host: str, seconds: float) -> ProviderError:
    """The error of a watchdog that fired (``first_byte`` or ``idle``)."""
    if kind == "first_byte":
        msg = f"no response from {host} within {seconds:g}s (first_byte timeout)"
    else:
        msg = f"no progress from {host} for {seconds:g}s (idle timeout; pings do not count)"
    return ProviderError(msg, type=f"{kind}_timeout", retryable=True)


# -- watchdogs (sync) ----------------------------------------------------------------


class Watch:
    """A deadline on a streaming response, enforced by one shared daemon
    thread: when it passes, ``fired`` is set and the response's socket is
    shut down, so a reader blocked in ``recv`` (or fed keep-alive bytes that
    are not progress) wakes up.  ``progress()`` moves the deadline."""

    __slots__ = ("deadline", "fired", "idle", "kind", "resp")

    def __init__(self, resp: Any, idle: float | None, kind: str = "idle") -> None:
        self.resp = resp
        self.idle = idle
        self.kind = kind
        self.fired: str | None = None
        self.deadline = time.monotonic() + idle if idle is not None else float("inf")
        if idle is not None:
            _watchdog.add(self)

    def progress(self) -> None:
        if self.idle is not None:
            self.deadline = time.monotonic() + self.idle

    def arm(self, seconds: float, kind: str) -> None:
        """A new deadline ``seconds`` from now (e.g. draining after the end)."""
        self.kind = kind
        self.idle = seconds
        self.deadline = time.monotonic() + seconds
        _watchdog.add(self)

    def stop(self) -> None:
        self.deadline = float("inf")
        self.resp = None

    def fire(self) -> None:
        resp = self.resp
        if resp is not None:
            self.fired = self.kind
            shutdown_socket(resp)


class _Watchdog:
    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._heap: list[tuple[float, int, Watch]] = []
        self._thread: threading.Thread | None = None
        self._n = 0

    def add(self, w: Watch) -> None:
        with self._cv:
            self._n += 1
            heapq.heappush(self._heap, (w.deadline, self._n, w))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="panto-watchdog", daemon=True
                )
                self._thread.start()
            elif self._heap[0][2] is w:
                self._cv.notify()

    def _run(self) -> None:
        with self._cv:
            while True:
                if not self._heap:
                    self._cv.wait()
                    continue
                when, _, w = self._heap[0]
                now = time.monotonic()
                if when > now:
                    self._cv.wait(when - now)
                    continue
                heapq.heappop(self._heap)
                if w.deadline == float("inf") or w.fired:
                    continue  # stopped
                if w.deadline > now:  # progress moved it: look again then
                    self._n += 1
                    heapq.heappush(self._heap, (w.deadline, self._n, w))
                    continue
                w.fire()


_watchdog = _Watchdog()


_plain_context: Any = None


def tls_verify(https: bool) -> Any:
    """httpx's ``verify`` for a client.  Plain http: an empty client context
    that is never used (and would refuse any certificate if it were).
    https: the system's hashed CA directory (``/etc/ssl/certs``, or
    ``SSL_CERT_DIR``), which OpenSSL reads lazily, one certificate per
    handshake (<1 ms instead of ~40 ms parsing a whole bundle).  httpx's
    default (certifi's bundle) when there is no such directory, and a
    ``SSL_CERT_FILE`` naming another bundle than the system's is loaded as
    asked."""
    import ssl

    global _plain_context
    if not https:  # one for every client: making one costs ~1 ms
        if _plain_context is None:
            _plain_context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return _plain_context
    paths = ssl.get_default_verify_paths()
    cert_file = os.environ.get("SSL_CERT_FILE")
    if cert_file and os.path.realpath(cert_file) != os.path.realpath(paths.openssl_cafile or ""):
        return True  # a bundle of one's own: httpx loads it
    capath = paths.capath
    try:
        hashed = capath is not None and any(_CA_HASH.fullmatch(n) for n in os.listdir(capath))
    except OSError:
        hashed = False
    if not hashed:
        return True
    return ssl.create_default_context(capath=capath)


_CA_HASH = LazyPattern(r"[0-9a-f]{8}\.\d+")

"""A small HTTP/1.1 client on the standard library (``socket`` + ``ssl``):
the sync agent's transport.

A provider round is one POST whose streamed answer is read up to its
terminal event; httpx does that well but costs ~50 ms of CPU to import and
set up, more than everything else ``panto -p`` does before its first byte.
This client does exactly what that round needs: one request at a time per
connection, a body given as bytes, the response's headers, its body framed
by ``content-length``, ``transfer-encoding: chunked`` or the end of the
connection, ``gzip``/``deflate`` undone on demand, keep-alive (one idle
connection kept per host, checked before reuse), TLS with SNI and
verification (the context made once per client), and errors of the same
shapes as httpx's (``ConnectTimeout``, ``ReadTimeout``,
``RemoteProtocolError``...; ``transport.transport_error`` maps either).

``transport.sync_client`` chooses: this client, or httpx's when a proxy is
configured in the environment (``HTTPS_PROXY`` and friends: httpx speaks
to proxies, this client does not).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = [
    "Client",
    "ConnectError",
    "ConnectTimeout",
    "HTTPError",
    "Headers",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "Response",
    "TimeoutException",
    "WriteError",
    "WriteTimeout",
]

#: At most this much of a response head (status line and headers), and of
#: one chunk-size or trailer line, is read.
MAX_HEAD = 64 * 1024
_RECV = 65536


class HTTPError(Exception):
    """A transport failure (the names follow httpx's)."""


class TimeoutException(HTTPError):
    pass


class ConnectTimeout(TimeoutException):
    pass


class ReadTimeout(TimeoutException):
    pass


class WriteTimeout(TimeoutException):
    pass


class ConnectError(HTTPError):
    pass


class ReadError(HTTPError):
    pass


class WriteError(HTTPError):
    pass


class RemoteProtocolError(HTTPError):
    """The server broke the protocol (a malformed response, the connection
    closed before the response was complete)."""


class DecodingError(HTTPError):
    pass


class Headers(dict):  # type: ignore[type-arg]
    """Response headers: names lower-cased, repeated ones joined with ``, ``;
    look-ups ignore case."""

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())  # type: ignore[no-any-return]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())


class _Conn:
    """One socket and what has been read from it but not consumed."""

    __slots__ = ("buf", "key", "sock")

    def __init__(self, sock: socket.socket, key: tuple[str, str, int]) -> None:
        self.sock = sock
        self.key = key
        self.buf = bytearray()

    def recv(self) -> bytes:
        try:
            return self.sock.recv(_RECV)
        except TimeoutError as e:
            raise ReadTimeout("timed out reading the response") from e
        except OSError as e:
            raise ReadError(str(e) or type(e).__name__) from e

    def fill(self) -> bool:
        """Read more into ``buf``; False at the end of the stream."""
        data = self.recv()
        if not data:
            return False
        self.buf += data
        return True

    def readline(self) -> bytes:
        """One CRLF-terminated line (without it)."""
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[: i + 2]
                return line
            if len(self.buf) > MAX_HEAD:
                raise RemoteProtocolError("a response line is too long")
            if not self.fill():
                raise RemoteProtocolError("the server closed the connection mid-response")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def readable(self) -> bool:
        """Data or EOF is waiting on an idle connection (so it is unusable)."""
        import select

        try:
            r, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(r)


class Response:
    """A response whose body is read as it is iterated (``iter_raw``: the
    bytes as sent, framing removed; ``iter_bytes``: content-encoding undone
    too).  ``close()`` gives a completely read connection back to the
    client for reuse, and closes any other."""

    def __init__(
        self,
        client: Client,
        conn: _Conn,
        status: int,
        reason: str,
        headers: Headers,
        keep_alive: bool,
        framing: str,
        length: int,
    ) -> None:
        self._client = client
        self._conn: _Conn | None = conn
        self.status_code = status
        self.reason_phrase = reason
        self.headers = headers
        self._keep_alive = keep_alive
        self._framing = framing  # "length" | "chunked" | "close" | "none"
        self._left = length
        self._complete = framing == "none" or (framing == "length" and length == 0)
        self._started = False
        self.extensions: dict[str, Any] = {}

    @property
    def is_complete(self) -> bool:
        return self._complete

    def shutdown_socket(self) -> None:
        """Wake a thread blocked reading this response (any thread)."""
        conn = self._conn
        if conn is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def iter_raw(self) -> Iterator[bytes]:
        if self._started:
            raise RuntimeError("the response body is already being read")
        self._started = True
        conn = self._conn
        if conn is None or self._complete:
            return
        if self._framing == "length":
            yield from self._length_body(conn)
        elif self._framing == "chunked":
            yield from self._chunked_body(conn)
        else:
            yield from self._close_body(conn)

    def _length_body(self, conn: _Conn) -> Iterator[bytes]:
        while self._left > 0:
            if not conn.buf and not conn.fill():
                raise RemoteProtocolError(
                    f"the server closed the connection with {self._left} bytes of the body unsent"
                )
            n = min(self._left, len(conn.buf))
            data = bytes(conn.buf[:n])
            del conn.buf[:n]
            self._left -= n
            if self._left == 0:
                self._complete = True
            yield data

    def _chunked_body(self, conn: _Conn) -> Iterator[bytes]:
        while True:
            line = conn.readline()
            size_s = line.split(b";", 1)[0].strip()
            try:
                size = int(size_s, 16)
            except ValueError:
                raise RemoteProtocolError(f"bad chunk size line {line[:40]!r}") from None
            if size < 0:
                raise RemoteProtocolError(f"bad chunk size line {line[:40]!r}")
            if size == 0:
                while conn.readline():  # trailers, up to the empty line
                    pass
                self._complete = True
                return
            left = size
            while left > 0:
                if not conn.buf and not conn.fill():
                    raise RemoteProtocolError(
                        "the server closed the connection in the middle of a chunk"
                    )
                n = min(left, len(conn.buf))
                data = bytes(conn.buf[:n])
                del conn.buf[:n]
                left -= n
                yield data
            if conn.readline() != b"":
                raise RemoteProtocolError("a chunk is not followed by CRLF")

    def _close_body(self, conn: _Conn) -> Iterator[bytes]:
        if conn.buf:
            data = bytes(conn.buf)
            conn.buf.clear()
            yield data
        while True:
            data = conn.recv()
            if not data:
                self._complete = True
                return
            yield data

    def iter_bytes(self) -> Iterator[bytes]:
        """The body with its ``content-encoding`` (gzip, deflate) undone;
        other encodings are passed through as sent (like httpx without
        brotli)."""
        decoders = []
        enc = self.headers.get("content-encoding") or ""
        for name in reversed([e.strip().lower() for e in enc.split(",") if e.strip()]):
            if name in ("gzip", "x-gzip", "deflate"):
                decoders.append(ContentDecoder(name))
        if not decoders:
            yield from self.iter_raw()
            return
        for chunk in self.iter_raw():
            for d in decoders:
                chunk = d.decode(chunk)
            if chunk:
                yield chunk
        tail = b""
        for d in decoders:
            tail = d.decode(tail) + d.flush()
        if tail:
            yield tail

    def read(self) -> bytes:
        return b"".join(self.iter_bytes())

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._complete and self._keep_alive and not conn.buf:
            self._client.release(conn)
        else:
            conn.close()

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ContentDecoder:
    def __init__(self, name: str) -> None:
        import zlib

        self._zlib = zlib
        self._name = name
        self._first = True
        wbits = zlib.MAX_WBITS | 16 if name in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._d = zlib.decompressobj(wbits)

    def decode(self, data: bytes) -> bytes:
        zlib = self._zlib
        try:
            out = self._d.decompress(data)
        except zlib.error as e:
            if self._name == "deflate" and self._first:  # a raw deflate stream
                self._d = zlib.decompressobj(-zlib.MAX_WBITS)
                self._first = False
                return self.decode(data)
            raise DecodingError(f"the {self._name} body does not decode: {e}") from e
        self._first = False
        return out

    def flush(self) -> bytes:
        try:
            return self._d.flush()
        except self._zlib.error as e:
            raise DecodingError(f"the {self._name} body does not decode: {e}") from e


def split_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, target) of an http(s) URL."""
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        raise ConnectError(f"unsupported URL {url!r} (http:// or https:// only)")
    end = len(rest)
    for i, ch in enumerate(rest):
        if ch in "/?#":
            end = i
            break
    authority, target = rest[:end], rest[end:].partition("#")[0]
    if not target.startswith("/"):
        target = "/" + target
    if "@" in authority:
        raise ConnectError("credentials in the URL are not supported")
    port = 443 if scheme == "https" else 80
    host = authority
    if authority.startswith("["):  # [v6]:port
        end = authority.find("]")
        host = authority[1:end]
        tail = authority[end + 1 :]
        if tail.startswith(":") and tail[1:]:
            port = int(tail[1:])
    elif ":" in authority:
        host, _, p = authority.rpartition(":")
        if p:
            try:
                port = int(p)
            except ValueError:
                raise ConnectError(f"bad port in URL {url!r}") from None
    if not host:
        raise ConnectError(f"no host in URL {url!r}")
    return scheme, host, port, target


class Client:
    """Sends one request at a time per connection; keeps one idle
    connection per (scheme, host, port).  The TLS context is
    ``ssl_context``, else made on the first https request by
    ``make_ssl_context`` (else ``ssl.create_default_context``) and kept.
    Thread-safe."""

    def __init__(self, make_ssl_context: Any = None, *, ssl_context: Any = None) -> None:
        self._make_ssl = make_ssl_context
        self._ssl: Any = ssl_context
        self._idle: dict[tuple[str, str, int], _Conn] = {}
        self._lock = threading.Lock()
        self.is_closed = False

    def _ssl_context(self) -> Any:
        if self._ssl is None:
            with self._lock:
                if self._ssl is None:
                    if self._make_ssl is not None:
                        self._ssl = self._make_ssl()
                    else:
                        import ssl

                        self._ssl = ssl.create_default_context()
        return self._ssl

    def release(self, conn: _Conn) -> None:
        with self._lock:
            if self.is_closed:
                conn.close()
                return
            old = self._idle.get(conn.key)
            self._idle[conn.key] = conn
        if old is not None and old is not conn:
            old.close()

    def _take(self, key: tuple[str, str, int]) -> _Conn | None:
        with self._lock:
            conn = self._idle.pop(key, None)
        if conn is not None and conn.readable():  # closed by the server meanwhile
            conn.close()
            return None
        return conn

    def _connect(self, key: tuple[str, str, int], timeout: float | None) -> _Conn:
        scheme, host, port = key
        # an ASCII host as bytes: getaddrinfo would import the idna codec for a str
        addr: str | bytes = host.encode("ascii") if host.isascii() else host
        try:
            sock = socket.create_connection((addr, port), timeout=timeout)  # type: ignore[arg-type]
        except TimeoutError as e:
            raise ConnectTimeout(f"timed out connecting to {host}:{port}") from e
        except OSError as e:
            raise ConnectError(str(e) or type(e).__name__) from e
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if scheme == "https":
                ctx = self._ssl_context()
                try:
                    sock = ctx.wrap_socket(sock, server_hostname=host)
                except TimeoutError as e:
                    raise ConnectTimeout(f"timed out in the TLS handshake with {host}") from e
                except OSError as e:  # ssl.SSLError (certificate verify failed...) included
                    raise ConnectError(str(e) or type(e).__name__) from e
        except BaseException:
            sock.close()
            raise
        return _Conn(sock, key)

    def send(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        body: bytes = b"",
        connect_timeout: float | None = None,
        head_timeout: float | None = None,
        read_timeout: float | None = None,
    ) -> Response:
        """Send the request; return once the response head is in (its
        body is read by iterating the response).  ``head_timeout`` bounds
        every write and read until then, ``read_timeout`` each read of the
        body."""
        if self.is_closed:
            raise ConnectError("the client is closed")
        scheme, host, port, target = split_url(url)
        key = (scheme, host, port)
        default = 443 if scheme == "https" else 80
        host_h = f"[{host}]" if ":" in host else host
        if port != default:
            host_h = f"{host_h}:{port}"
        lines = [f"{method} {target} HTTP/1.1", f"host: {host_h}"]
        lower = {k.lower() for k in headers}
        for k, v in headers.items():
            if "\r" in k or "\n" in k or "\r" in v or "\n" in v:
                raise ValueError(f"header {k!r} holds a line break")
            lines.append(f"{k}: {v}")
        if "accept" not in lower:
            lines.append("accept: */*")
        if "connection" not in lower:
            lines.append("connection: keep-alive")
        if body or method not in ("GET", "HEAD"):
            lines.append(f"content-length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        conn = self._take(key)
        if conn is not None:
            try:
                return self._exchange(conn, method, head, body, head_timeout, read_timeout)
            except (ReadError, WriteError, RemoteProtocolError) as e:
                if not getattr(e, "before_response", False):
                    raise
                # a kept connection the server closed meanwhile: once more, fresh
        conn = self._connect(key, connect_timeout)
        return self._exchange(conn, method, head, body, head_timeout, read_timeout)

    def _exchange(
        self,
        conn: _Conn,
        method: str,
        head: bytes,
        body: bytes,
        head_timeout: float | None,
        read_timeout: float | None,
    ) -> Response:
        try:
            conn.sock.settimeout(head_timeout)
            try:
                conn.sock.sendall(head + body if len(body) < 65536 else head)
                if len(body) >= 65536:
                    conn.sock.sendall(body)
            except TimeoutError as e:
                raise WriteTimeout("timed out sending the request") from e
            except OSError as e:
                err = WriteError(str(e) or type(e).__name__)
                err.before_response = True  # type: ignore[attr-defined]
                raise err from e
            if not conn.buf:
                # nothing of the response yet: a failure here on a kept
                # connection means the server had closed it (send retries)
                try:
                    got = conn.fill()
                except ReadError as e:
                    e.before_response = True  # type: ignore[attr-defined]
                    raise
                if not got:
                    err2 = RemoteProtocolError(
                        "the server closed the connection without a response"
                    )
                    err2.before_response = True  # type: ignore[attr-defined]
                    raise err2
            while True:
                status_line = conn.readline()
                version, _, rest = status_line.partition(b" ")
                code_s, _, reason = rest.partition(b" ")
                if not version.startswith(b"HTTP/1.") or not code_s.isdigit():
                    raise RemoteProtocolError(f"not an HTTP/1.x response: {status_line[:60]!r}")
                status = int(code_s)
                headers = Headers()
                size = len(status_line)
                while True:
                    line = conn.readline()
                    if not line:
                        break
                    size += len(line)
                    if size > MAX_HEAD:
                        raise RemoteProtocolError("the response head is too long")
                    name, colon, value = line.partition(b":")
                    if not colon:
                        raise RemoteProtocolError(f"a malformed header line: {line[:60]!r}")
                    k = name.strip().decode("latin-1").lower()
                    v = value.strip().decode("latin-1")
                    prev = dict.get(headers, k)
                    dict.__setitem__(headers, k, v if prev is None else f"{prev}, {v}")
                if 100 <= status < 200 and status != 101:
                    continue  # 100 Continue and friends: the real response follows
                break
            conn.sock.settimeout(read_timeout)
        except BaseException:
            conn.close()
            raise
        conn_h = (headers.get("connection") or "").lower()
        if version == b"HTTP/1.0":
            keep = "keep-alive" in conn_h
        else:
            keep = "close" not in conn_h
        te = (headers.get("transfer-encoding") or "").lower()
        length = 0
        if method == "HEAD" or status in (204, 304):
            framing = "none"
        elif te:
            if te.rsplit(",", 1)[-1].strip() != "chunked":
                framing, keep = "close", False
            else:
                framing = "chunked"
        elif "content-length" in headers:
            try:
                length = int(headers["content-length"].split(",")[0].strip())
                if length < 0:
                    raise ValueError
            except ValueError:
                conn.close()
                raise RemoteProtocolError(
                    f"bad content-length {headers['content-length']!r}"
                ) from None
            framing = "length"
        else:
            framing, keep = "close", False
        return Response(
            self, conn, status, reason.decode("latin-1"), headers, keep, framing, length
        )

    def close(self) -> None:
        with self._lock:
            self.is_closed = True
            idle, self._idle = list(self._idle.values()), {}
        for c in idle:
            c.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

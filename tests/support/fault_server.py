"""A raw-socket HTTP/1.1 fault server on 127.0.0.1 for the fault suite.

It speaks just enough HTTP/1.1 to look like a provider (keep-alive,
chunked bodies, Content-Length bodies) and answers each request with a
*behaviour*: a function ``fn(conn, req)`` that writes whatever bytes it wants
(or none) through a :class:`Conn`.  The behaviours in :data:`BEHAVIOURS` are
the scripted faults of issue 12: stalls at every point of a response, a
keep-alive trickle, resets, gzip, huge error bodies (generated lazily, never
held in memory), the request's auth header echoed back into error bodies and
in-stream error events, JSON errors in a 200, ``Retry-After: 3600``, and a
model that calls the ``bash`` tool.

The streamed answers come from panto's wire encoders
(``panto.providers.codec``, checked against the hand-written fixtures by
``tests/test_codec.py``) through ``panto.testing.render_sse``; nothing else
of panto is used: the faults themselves are raw bytes written here.
Both wires: Anthropic messages (``POST {base}/v1/messages``, base URL
without ``/v1``) and OpenAI chat (``POST {base}/v1/chat/completions``, base
URL with ``/v1``); :meth:`FaultServer.base_url` gives the right one.

The server is bounded: at most ``max_conns`` connection threads, every
socket write and wait is interruptible, and it stops by itself after
``lifetime`` seconds even if nobody calls :meth:`FaultServer.close`.
"""

from __future__ import annotations

import gzip
import itertools
import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from panto.conversation import Text, ToolUse, Usage
from panto.providers.codec import make_encoder
from panto.testing import Reply, render_sse

__all__ = [
    "ANTHROPIC",
    "OPENAI",
    "WIRES",
    "BEHAVIOURS",
    "Conn",
    "FaultServer",
    "Request",
    "Stop",
    "answer_events",
    "error_event",
    "tool_call_events",
]

ANTHROPIC = "anthropic-messages"
OPENAI = "openai-chat"
WIRES = (ANTHROPIC, OPENAI)

ANSWER = "The answer is 42."

_ids = itertools.count(1)


class Stop(Exception):
    """The server is stopping or the client went away: end the handler."""


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes
    wire: str | None
    #: 1-based: which request this is on the server (over all connections)
    index: int = 0
    #: the time the request was fully read
    at: float = 0.0

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def auth(self) -> str:
        """The credential header's whole value (``x-api-key`` on the
        Anthropic wire, ``Authorization`` on OpenAI's), '' when absent."""
        return self.headers.get("x-api-key") or self.headers.get("authorization") or ""

    @property
    def key(self) -> str:
        """The bare key (``Bearer `` stripped)."""
        a = self.auth
        return a[7:] if a.lower().startswith("bearer ") else a

    @property
    def model(self) -> str:
        j = self.json
        return (j.get("model") if isinstance(j, dict) else None) or "fault-model"

    @property
    def n_messages(self) -> int:
        j = self.json
        return len(j.get("messages") or []) if isinstance(j, dict) else 0


class Conn:
    """One accepted connection; behaviours write through it."""

    def __init__(self, sock: socket.socket, server: FaultServer) -> None:
        self.sock = sock
        self.server = server
        self.chunked = False
        self.keep_alive = True
        self._buf = b""

    # -- reading ------------------------------------------------------------------------

    def read_request(self) -> Request | None:
        """The next request on this connection, or None when the client closed it."""
        while b"\r\n\r\n" not in self._buf:
            if len(self._buf) > 1 << 16:
                raise Stop("request head too large")
            data = self._recv()
            if not data:
                return None
            self._buf += data
        head, _, rest = self._buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = (lines[0].split(" ") + ["", ""])[:3]
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        if length > 64 << 20:
            raise Stop("request body too large")
        while len(rest) < length:
            data = self._recv()
            if not data:
                return None
            rest += data
        body, self._buf = rest[:length], rest[length:]
        p = path.split("?", 1)[0]
        wire = (
            ANTHROPIC
            if p.endswith("/v1/messages")
            else OPENAI
            if p.endswith("/chat/completions")
            else None
        )
        return Request(method, path, headers, body, wire)

    def _recv(self) -> bytes:
        while True:
            if self.server.stopping.is_set():
                raise Stop("stopping")
            try:
                return self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return b""

    # -- writing ------------------------------------------------------------------------

    def raw(self, data: bytes) -> None:
        """Send bytes as they are (no chunk framing)."""
        view = memoryview(data)
        while view:
            if self.server.stopping.is_set():
                raise Stop("stopping")
            try:
                n = self.sock.send(view)
            except TimeoutError:
                continue
            except OSError as e:  # the client went away (EPIPE, ECONNRESET)
                raise Stop(str(e)) from e
            view = view[n:]

    def head(
        self,
        status: int = 200,
        headers: dict[str, str] | None = None,
        *,
        length: int | None = None,
        content_type: str = "text/event-stream",
    ) -> None:
        """Status line and headers.  ``length`` None: a chunked body."""
        reason = {
            200: "OK",
            400: "Bad Request",
            401: "Unauthorized",
            429: "Too Many Requests",
            500: "Internal Server Error",
            503: "Service Unavailable",
        }.get(status, "Status")
        h = {"content-type": content_type, "date": "Thu, 03 Dec 2026 00:00:00 GMT"}
        if length is None:
            h["transfer-encoding"] = "chunked"
            self.chunked = True
        else:
            h["content-length"] = str(length)
            self.chunked = False
        h.update({k.lower(): v for k, v in (headers or {}).items()})
        out = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in h.items()]
        self.raw(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))

    def send(self, data: bytes) -> None:
        """Body bytes: one chunk when the body is chunked."""
        if not data:
            return
        if self.chunked:
            self.raw(b"%x\r\n" % len(data) + data + b"\r\n")
        else:
            self.raw(data)

    def end(self) -> None:
        """The end of a chunked body (the connection stays open for the next request)."""
        if self.chunked:
            self.raw(b"0\r\n\r\n")

    def respond(
        self,
        status: int,
        body: bytes | str | Any,
        headers: dict[str, str] | None = None,
        content_type: str | None = None,
    ) -> None:
        """A whole response with a Content-Length body (dicts are JSON)."""
        if isinstance(body, str):
            data, ct = body.encode(), "text/plain; charset=utf-8"
        elif isinstance(body, bytes):
            data, ct = body, "application/octet-stream"
        else:
            data, ct = json.dumps(body).encode(), "application/json"
        self.head(status, headers, length=len(data), content_type=content_type or ct)
        self.raw(data)

    def sleep(self, seconds: float) -> None:
        """Wait; raises Stop early when the server stops or the client closes."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if self.server.stopping.wait(min(left, 0.1)):
                raise Stop("stopping")
            if self.client_closed():
                raise Stop("client closed")

    def hold(self) -> None:
        """Keep the connection open and silent until the client closes it
        (or the server stops)."""
        self.sleep(float("inf"))

    def client_closed(self) -> bool:
        try:
            self.sock.setblocking(False)
            try:
                data = self.sock.recv(1, socket.MSG_PEEK)
            finally:
                self.sock.setblocking(True)
                self.sock.settimeout(0.5)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True
        return data == b""

    def reset(self) -> None:
        """Abort the connection with a TCP RST."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.keep_alive = False
        raise Stop("reset")


Behaviour = Callable[[Conn, Request], None]


@dataclass
class FaultServer:
    """``FaultServer(behaviour)`` or ``FaultServer([b1, b2, ...])``: the
    n-th request gets the n-th behaviour, the last one repeats."""

    script: Behaviour | list[Behaviour]
    lifetime: float = 120.0
    max_conns: int = 16
    requests: list[Request] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(self.max_conns)
        self._socks: set[socket.socket] = set()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(
            target=self._accept_loop, daemon=True, name="fault-accept"
        )
        self._started = time.monotonic()
        self._acceptor.start()

    # -- public ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, wire: str) -> str:
        """As the official SDKs spell it: OpenAI's includes /v1, Anthropic's not."""
        return self.url + "/v1" if wire == OPENAI else self.url

    def close(self) -> None:
        self.stopping.set()
        try:
            self._listener.close()
        except OSError:
            pass
        with self._lock:
            socks = list(self._socks)
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._acceptor.join(2)
        for t in list(self._threads):
            t.join(2)

    def __enter__(self) -> FaultServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def posts(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST"]

    # -- internals ------------------------------------------------------------------------

    def _behaviour(self, n: int) -> Behaviour:
        if callable(self.script):
            return self.script
        return self.script[min(n, len(self.script)) - 1]

    def _accept_loop(self) -> None:
        while not self.stopping.is_set():
            if time.monotonic() - self._started > self.lifetime:
                self.close_async()
                return
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if not self._slots.acquire(timeout=5):
                sock.close()
                continue
            t = threading.Thread(target=self._serve, args=(sock,), daemon=True, name="fault-conn")
            self._threads = [x for x in self._threads if x.is_alive()] + [t]
            t.start()

    def close_async(self) -> None:
        threading.Thread(target=self.close, daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        sock.settimeout(0.5)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._lock:
            self._socks.add(sock)
        conn = Conn(sock, self)
        try:
            while not self.stopping.is_set():
                req = conn.read_request()
                if req is None:
                    break
                with self._lock:
                    self.requests.append(req)
                    req.index = len(self.requests)
                req.at = time.monotonic()
                if req.method != "POST" or req.wire is None:
                    conn.respond(404, {"error": {"type": "not_found", "message": req.path}})
                    continue
                self._behaviour(sum(1 for r in self.requests if r.method == "POST"))(conn, req)
                if not conn.keep_alive:
                    break
        except Stop:
            pass
        except Exception as e:  # noqa: BLE001 - recorded for the test to see
            self.errors.append(f"{type(e).__name__}: {e}")
        finally:
            with self._lock:
                self._socks.discard(sock)
            try:
                sock.close()
            except OSError:
                pass
            self._slots.release()


# -- the two wires ------------------------------------------------------------------------


def answer_events(wire: str, text: str = ANSWER, model: str = "fault-model") -> list[bytes]:
    """A complete streamed text answer; the last element is the terminal
    event (``message_stop`` / ``data: [DONE]``)."""
    reply = Reply([Text(text)], usage=Usage(input_tokens=10, output_tokens=7), chunk=6)
    return render_sse(reply, wire, model)


def tool_call_events(
    wire: str, name: str, args: dict[str, Any], model: str = "fault-model", call_id: str = ""
) -> list[bytes]:
    """A streamed answer that is one tool call (stop reason tool use), its
    arguments in one delta."""
    call = ToolUse(call_id or f"toolu_fault{next(_ids):06d}", name, args)
    reply = Reply([call], usage=Usage(input_tokens=10, output_tokens=9), chunk=1 << 30)
    return render_sse(reply, wire, model)


def error_event(wire: str, message: str, type_: str = "invalid_request_error") -> bytes:
    """An in-stream provider error event."""
    return make_encoder(wire).error(type_, message)


def ping_event(wire: str) -> bytes:
    """Keep-alive noise that is not progress: an Anthropic ping / an SSE comment."""
    return b'event: ping\ndata: {"type":"ping"}\n\n' if wire == ANTHROPIC else b": keep-alive\n\n"


def error_json(message: str, type_: str = "authentication_error") -> dict[str, Any]:
    return {"type": "error", "error": {"type": type_, "message": message}}


def echo_text(req: Request) -> str:
    """The request's credentials as a provider might echo them back."""
    key = req.key
    return f"invalid credentials: header value {req.auth!r}; key {key}; key prefix {key[:-4]}****"


# -- behaviours ---------------------------------------------------------------------------


def ok(conn: Conn, req: Request) -> None:
    conn.head(200)
    for ev in answer_events(req.wire or ANTHROPIC, model=req.model):
        conn.send(ev)
    conn.end()


def ok_then(*rest: Behaviour) -> list[Behaviour]:
    return [ok, *rest]


def stall_before_headers(conn: Conn, req: Request) -> None:
    conn.hold()


def stall_after_headers(conn: Conn, req: Request) -> None:
    conn.head(200)
    conn.hold()


def stall_after_headers_pings(conn: Conn, req: Request) -> None:
    """Headers, then only pings/comments every 0.3 s: no event ever."""
    conn.head(200)
    while True:
        conn.sleep(0.3)
        conn.send(ping_event(req.wire or ANTHROPIC))


def _first_part(req: Request) -> list[bytes]:
    """The answer's events up to and including the first text delta."""
    evs = answer_events(req.wire or ANTHROPIC, model=req.model)
    n = 4 if req.wire == ANTHROPIC else 2
    return evs[:n]


def stall_mid_event(conn: Conn, req: Request) -> None:
    """Some text, then half of the next event, then silence."""
    conn.head(200)
    for ev in _first_part(req):
        conn.send(ev)
    conn.send(b'data: {"type":"content_blo')
    conn.hold()


def stall_mid_stream_pings(conn: Conn, req: Request) -> None:
    """Some text, then only pings/comments every 0.3 s: no progress."""
    conn.head(200)
    for ev in _first_part(req):
        conn.send(ev)
    while True:
        conn.sleep(0.3)
        conn.send(ping_event(req.wire or ANTHROPIC))


def stall_after_terminal(conn: Conn, req: Request) -> None:
    """A complete answer, then the chunked body never ends (silent)."""
    conn.head(200)
    for ev in answer_events(req.wire or ANTHROPIC, model=req.model):
        conn.send(ev)
    conn.hold()


def stall_after_terminal_pings(conn: Conn, req: Request) -> None:
    """A complete answer, then pings and comments forever."""
    conn.head(200)
    for ev in answer_events(req.wire or ANTHROPIC, model=req.model):
        conn.send(ev)
    while True:
        conn.sleep(0.3)
        conn.send(ping_event(req.wire or ANTHROPIC))
        conn.send(b": still here\n\n")


def trickle(conn: Conn, req: Request) -> None:
    """Headers, then one byte of an SSE comment every 2 s, forever."""
    conn.head(200)
    for b in itertools.cycle(b":\n"):
        conn.send(bytes([b]))
        conn.sleep(2.0)


def reset_before_headers(conn: Conn, req: Request) -> None:
    conn.reset()


def reset_mid_stream(conn: Conn, req: Request) -> None:
    conn.head(200)
    for ev in _first_part(req):
        conn.send(ev)
    conn.sleep(0.05)
    conn.reset()


def huge_line_200(conn: Conn, req: Request) -> None:
    """A 200 SSE body that is one 1 GiB line (no newline ever), sent lazily."""
    conn.head(200)
    for piece in _huge_body(b"data: ", GIB):
        conn.send(piece)
    conn.end()


def gzip_sse(conn: Conn, req: Request) -> None:
    """The answer gzip-compressed (Content-Encoding: gzip) when the client
    accepts gzip (as real providers do), identity otherwise."""
    body = b"".join(answer_events(req.wire or ANTHROPIC, model=req.model))
    if "gzip" in req.headers.get("accept-encoding", ""):
        body = gzip.compress(body)
        conn.head(200, {"content-encoding": "gzip"})
    else:
        conn.head(200)
    for i in range(0, len(body), 40):  # in pieces: the decompressor must stream
        conn.send(body[i : i + 40])
    conn.end()


GIB = 1 << 30


def _huge_body(prefix: bytes, total: int) -> Iterator[bytes]:
    """``prefix`` then filler up to ``total`` bytes, 64 KiB at a time."""
    yield prefix
    filler = b"x" * 65536
    left = total - len(prefix)
    while left > 0:
        n = min(left, len(filler))
        yield filler[:n]
        left -= n


def huge_error(status: int, *, chunked: bool = False, echo: bool = True) -> Behaviour:
    """An HTTP error whose JSON body is 1 GiB (sent lazily until the client
    stops reading); its first bytes echo the key when ``echo``."""

    def behave(conn: Conn, req: Request) -> None:
        msg = echo_text(req) if echo else "huge"
        prefix = ('{"type":"error","error":{"type":"api_error","message":"' + msg + " ").encode()
        headers = {"retry-after": "0"} if status >= 500 or status == 429 else {}
        if chunked:
            conn.head(status, headers, content_type="application/json")
        else:
            conn.head(status, headers, length=GIB, content_type="application/json")
        for piece in _huge_body(prefix, GIB):
            conn.send(piece)
        conn.end()

    behave.__name__ = f"huge_{status}{'_chunked' if chunked else ''}"
    return behave


def echo_http_error(status: int = 401, *, as_text: bool = False) -> Behaviour:
    def behave(conn: Conn, req: Request) -> None:
        if as_text:
            conn.respond(status, echo_text(req))
        else:
            conn.respond(status, error_json(echo_text(req)))

    behave.__name__ = f"echo_http_{status}{'_text' if as_text else ''}"
    return behave


def echo_stream_error_early(conn: Conn, req: Request) -> None:
    """A 200 stream whose first event is an error naming the key."""
    conn.head(200)
    conn.send(error_event(req.wire or ANTHROPIC, echo_text(req)))
    conn.end()


def echo_stream_error_late(conn: Conn, req: Request) -> None:
    """Some text, then an in-stream error event naming the key."""
    conn.head(200)
    for ev in _first_part(req):
        conn.send(ev)
    conn.send(error_event(req.wire or ANTHROPIC, echo_text(req)))
    conn.end()


def echo_non_sse_200(conn: Conn, req: Request) -> None:
    """A 200 whose body is not SSE (an HTML page quoting the key)."""
    body = f"{req.key} is not authorized\n<html><body>{echo_text(req)}</body></html>\n"
    conn.respond(200, body, content_type="text/html")


def json_error_200(conn: Conn, req: Request) -> None:
    """A 200 with a JSON error body (no SSE), naming the key."""
    conn.respond(200, error_json(echo_text(req), "invalid_request_error"))


def json_error_200_plain(conn: Conn, req: Request) -> None:
    """A 200 with a JSON error body (no SSE)."""
    conn.respond(200, error_json("model not found: fault-model", "not_found_error"))


def retry_after_3600(conn: Conn, req: Request) -> None:
    conn.respond(
        429,
        error_json("rate limited " + echo_text(req), "rate_limit_error"),
        headers={"retry-after": "3600"},
    )


def bash_call(command: str, timeout: float | None = None) -> Behaviour:
    """The model calls ``bash`` with ``command``; later requests (with the
    tool result) get a plain answer."""
    args: dict[str, Any] = {"command": command}
    if timeout is not None:
        args["timeout"] = timeout

    def behave(conn: Conn, req: Request) -> None:
        wire = req.wire or ANTHROPIC
        last = (req.json or {}).get("messages") or [{}]
        if req.n_messages > 1 and _has_tool_result(last[-1]):
            evs = answer_events(wire, "done", model=req.model)
        else:
            evs = tool_call_events(wire, "bash", args, model=req.model)
        conn.head(200)
        for ev in evs:
            conn.send(ev)
        conn.end()

    return behave


def _has_tool_result(msg: dict[str, Any]) -> bool:
    if msg.get("role") == "tool":
        return True
    content = msg.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


#: name -> behaviour: every scripted fault (the secrets matrix runs them all).
BEHAVIOURS: dict[str, Behaviour] = {
    "ok": ok,
    "stall_before_headers": stall_before_headers,
    "stall_after_headers": stall_after_headers,
    "stall_after_headers_pings": stall_after_headers_pings,
    "stall_mid_event": stall_mid_event,
    "stall_mid_stream_pings": stall_mid_stream_pings,
    "stall_after_terminal": stall_after_terminal,
    "stall_after_terminal_pings": stall_after_terminal_pings,
    "trickle": trickle,
    "reset_before_headers": reset_before_headers,
    "reset_mid_stream": reset_mid_stream,
    "gzip": gzip_sse,
    "huge_401": huge_error(401),
    "huge_503_chunked": huge_error(503, chunked=True),
    "huge_line_200": huge_line_200,
    "echo_http_401": echo_http_error(401),
    "echo_http_400_text": echo_http_error(400, as_text=True),
    "echo_http_500": echo_http_error(500),
    "echo_stream_error_early": echo_stream_error_early,
    "echo_stream_error_late": echo_stream_error_late,
    "echo_non_sse_200": echo_non_sse_200,
    "json_error_200": json_error_200,
    "retry_after_3600": retry_after_3600,
}

"""A scripted LLM server on 127.0.0.1 speaking the three provider wires.

``ScriptedServer`` is a real threaded HTTP/1.1 server (stdlib
``http.server``).  Each request pops the next item of its script and answers
it in the wire the request asked for (``/v1/messages`` -> Anthropic messages,
``.../chat/completions`` -> OpenAI chat, ``.../responses`` -> the OpenAI
Responses API), streaming exactly what the real APIs
send (the captured streams in ``tests/fixtures/`` pin what that is)::

    from panto.conversation import Text, Thinking, ToolUse
    from panto.testing import HTTPError, Reply, ScriptedServer

    with ScriptedServer([
        Reply([Thinking("hmm", "sig-1"), ToolUse("toolu_1", "add", {"a": 1})]),
        HTTPError(429, {"error": {"type": "rate_limit_error", "message": "slow"}},
                  headers={"retry-after": "1"}),
        Reply([Text("done")], error={"type": "overloaded_error"}, error_after=3),
    ]) as server:
        ...  # point a Config at server.url (+ "/v1" for the OpenAI wire)
        server.requests[0].json   # the exact JSON panto sent

Script items: ``Reply`` (a streamed answer whose blocks are panto's own
``Text``, ``Thinking``, ``RedactedThinking`` and ``ToolUse``; it can also
carry a provider error event, a mid-stream disconnect or a stall),
``HTTPError`` (a status with a JSON or text body and headers), or a callable
``fn(request) -> Reply | HTTPError``.  With the script exhausted the server
calls ``responder`` (default: answer HTTP 500 "script exhausted").

``mock_server()`` is the process-wide instance behind the offline ``mock``
provider: it echoes the prompt with a little thinking, and calls a declared
tool when the prompt says ``call TOOLNAME {json args}`` (or ``call TOOLNAME
text``, the text becoming its first required parameter).
"""

from __future__ import annotations

import itertools
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .conversation import (
    Block,
    Message,
    RedactedThinking,
    Text,
    Thinking,
    ToolResultBlock,
    ToolUse,
    Usage,
)
from .events import (
    BlockComplete,
    BlockKind,
    BlockStart,
    ContentDelta,
    Event,
    MessageComplete,
    MessageStart,
    ToolDetails,
)
from .providers.codec import RequestError, encode_events, make_encoder, parse_request

__all__ = [
    "HTTPError",
    "Raw",
    "RawConnection",
    "RecordedRequest",
    "Reply",
    "ScriptedServer",
    "echo_responder",
    "mock_server",
    "render_sse",
    "reply_events",
]


@dataclass
class Reply:
    """A scripted streamed answer.

    ``blocks`` are streamed in order (text and thinking cut into deltas of
    ``chunk`` characters, tool input JSON into slices of ``chunk``).
    ``stop_reason`` is a normalized reason (default ``tool_use`` when there
    are tool calls, else ``stop``).  The fault fields count SSE events: before
    event number ``error_after`` an ``error`` event is sent instead and the
    stream ends (``error`` is ``{"type": ..., "message": ...}``); at
    ``disconnect_after`` the connection is dropped without finishing the
    chunked body; at ``stall_after`` the server stops sending for ``stall``
    seconds.  ``delay`` sleeps between events; ``events_per_write`` coalesces
    events into one socket write.
    """

    blocks: Sequence[Block] = ()
    stop_reason: str | None = None
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=10, output_tokens=5))
    model: str | None = None
    chunk: int = 8
    delay: float = 0.0
    error: dict[str, Any] | None = None
    error_after: int = 0
    disconnect_after: int | None = None
    stall_after: int | None = None
    stall: float = 30.0
    events_per_write: int = 1
    headers: dict[str, str] = field(default_factory=dict)
    #: Render once and send the same bytes every time (benchmarks).
    cache: bool = False
    #: (the rendered events when ``cache`` is set)
    rendered: dict[tuple[str, str], list[bytes]] = field(
        default_factory=dict, repr=False, compare=False
    )


@dataclass
class HTTPError:
    """An HTTP error response: ``body`` is JSON-encoded unless it is a str."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    wire: str
    #: the client's (host, port): requests on one kept-alive connection share it
    client: tuple[str, int] | None = None

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None


class RawConnection:
    """What a ``Raw`` item writes to: the request, the socket and a wait
    that ends early when the server closes."""

    def __init__(self, sock: socket.socket, request: RecordedRequest, closing: threading.Event):
        self.sock = sock
        self.request = request
        self._closing = closing
        #: bytes written so far
        self.sent = 0

    def send(self, data: bytes) -> bool:
        """Write ``data``; False once the client has gone."""
        try:
            self.sock.sendall(data)
        except OSError:
            return False
        self.sent += len(data)
        return True

    def wait(self, seconds: float) -> bool:
        """Sleep; True when the server is closing."""
        return self._closing.wait(seconds)


@dataclass
class Raw:
    """A response written byte by byte by ``write(conn)`` (a
    ``RawConnection``): status line, headers and body are the test's, for
    faults the other items cannot express (a stall before the headers, a
    gzip body, a body that never ends).  The connection closes afterwards."""

    write: Callable[[RawConnection], None]


ScriptItem = Reply | HTTPError | Raw | Callable[[RecordedRequest], Reply | HTTPError | Raw]

_ids = itertools.count(1)


def _pieces(s: str, n: int) -> list[str]:
    n = max(1, n)
    return [s[i : i + n] for i in range(0, len(s), n)] or [""]


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _stop_reason(reply: Reply) -> str:
    if reply.stop_reason:
        return reply.stop_reason
    return "tool_use" if any(isinstance(b, ToolUse) for b in reply.blocks) else "stop"


_KINDS: dict[type, BlockKind] = {
    Text: "text",
    Thinking: "thinking",
    RedactedThinking: "redacted_thinking",
    ToolUse: "tool_use",
}


def reply_events(reply: Reply, model: str = "mock-model") -> list[Event]:
    """The stream events of a complete ``reply``: text, thinking and tool
    arguments cut into deltas of ``reply.chunk`` characters."""
    u = reply.usage
    # the API reports one output token at the start, the total at the end
    events: list[Event] = [MessageStart("", reply.model or model, replace(u, output_tokens=1))]
    for i, b in enumerate(reply.blocks):
        kind = _KINDS.get(type(b))
        if kind is None:
            raise TypeError(f"cannot stream block {b!r}")
        events.append(BlockStart(i, kind))
        if isinstance(b, ToolUse):
            events.append(ToolDetails(i, b.id, b.name))
            args = b.raw_input if b.raw_input is not None else _dumps(b.input)
            events += [ContentDelta(i, kind, p) for p in _pieces(args, reply.chunk)]
        elif isinstance(b, (Text, Thinking)):
            events += [ContentDelta(i, kind, p) for p in _pieces(b.text, reply.chunk)]
        events.append(BlockComplete(i, b))
    stop = _stop_reason(reply)
    message = Message("assistant", tuple(reply.blocks), u, stop, model=reply.model or model)
    events.append(MessageComplete(message, stop, u))
    return events


def render_sse(reply: Reply, wire: str, model: str = "mock-model") -> list[bytes]:
    """The SSE events (one ``bytes`` each) of a complete ``reply`` on
    ``wire`` (``openai-chat``, ``anthropic-messages`` or ``openai-responses``),
    without faults:
    ``reply_events`` through the wire's encoder (``panto.providers.codec``)."""
    return encode_events(wire, reply_events(reply, model))


def _error_event(wire: str, error: dict[str, Any]) -> bytes:
    enc = make_encoder(wire)
    return enc.error(str(error.get("type", "api_error")), str(error.get("message", "error")))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": []})
        else:
            self._send_json(404, {"error": {"type": "not_found", "message": "no such path"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        if path.endswith("/v1/messages"):
            wire = "anthropic-messages"
        elif path.endswith("/chat/completions"):
            wire = "openai-chat"
        elif path.endswith("/responses"):
            wire = "openai-responses"
        else:
            self._send_json(404, {"error": {"type": "not_found", "message": f"no route {path}"}})
            return
        req = RecordedRequest(
            "POST",
            path,
            {k.lower(): v for k, v in self.headers.items()},
            body,
            wire,
            tuple(self.client_address[:2]),  # type: ignore[arg-type]
        )
        item = self.server.owner.next_item(req)
        if callable(item) and not isinstance(item, Raw):
            item = item(req)
        if isinstance(item, HTTPError):
            self._send_error(item)
        elif isinstance(item, Raw):
            self.close_connection = True
            item.write(RawConnection(self.connection, req, self.server.owner.closing))
            self._abort()
        elif isinstance(item, Reply):
            model = (req.json or {}).get("model") or "mock-model"
            self._stream(item, wire, model)
        else:
            self._send_json(500, {"error": {"type": "api_error", "message": "script exhausted"}})

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = obj.encode() if isinstance(obj, str) else _dumps(obj).encode()
        self.send_response(status)
        ctype = "text/plain" if isinstance(obj, str) else "application/json"
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, e: HTTPError) -> None:
        body = e.body
        if body is None:
            body = {"error": {"type": "api_error", "message": f"HTTP {e.status}"}}
        self._send_json(e.status, body, e.headers)

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _stream(self, reply: Reply, wire: str, model: str) -> None:
        if reply.cache:
            events = reply.rendered.get((wire, model)) or reply.rendered.setdefault(
                (wire, model), render_sse(reply, wire, model)
            )
        else:
            events = render_sse(reply, wire, model)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        per = max(1, reply.events_per_write)
        pending: list[bytes] = []
        try:
            for i, data in enumerate(events):
                if reply.error is not None and i == reply.error_after:
                    pending.append(_error_event(wire, reply.error))
                    self._write_chunk(b"".join(pending))
                    self.wfile.write(b"0\r\n\r\n")
                    return
                if reply.disconnect_after is not None and i == reply.disconnect_after:
                    if pending:
                        self._write_chunk(b"".join(pending))
                    self._abort()
                    return
                if reply.stall_after is not None and i == reply.stall_after:
                    if pending:
                        self._write_chunk(b"".join(pending))
                        pending = []
                    self.server.owner.stall_wait(reply.stall)
                    self._abort()
                    return
                pending.append(data)
                if len(pending) >= per:
                    self._write_chunk(b"".join(pending))
                    pending = []
                if reply.delay:
                    time.sleep(reply.delay)
            if pending:
                self._write_chunk(b"".join(pending))
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _abort(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # the listen backlog: hundreds of clients connect at once in the load
    # benchmarks (socketserver's default of 5 resets them)
    request_queue_size = 1024
    block_on_close = False
    allow_reuse_address = True
    owner: ScriptedServer


class ScriptedServer:
    """A loopback HTTP server answering from a script (see the module doc).

    ``url`` is ``http://127.0.0.1:PORT``; point an Anthropic config at it
    as is and an OpenAI config at ``url + "/v1"`` (or use ``base_url(wire)``).
    ``requests`` lists what was received, in order.
    """

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        responder: Callable[[RecordedRequest], Reply | HTTPError] | None = None,
    ) -> None:
        self._script: deque[ScriptItem] = deque(script)
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, wire: str) -> str:
        return self.url + ("/v1" if wire in ("openai-chat", "openai-responses") else "")

    def push(self, *items: ScriptItem) -> None:
        """Append items to the script."""
        with self._lock:
            self._script.extend(items)

    def reset(self) -> None:
        """Forget the script and the recorded requests."""
        with self._lock:
            self._script.clear()
            self.requests.clear()

    @property
    def pending(self) -> int:
        return len(self._script)

    def start(self) -> ScriptedServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="panto-scripted-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next_item(self, req: RecordedRequest) -> ScriptItem | None:
        with self._lock:
            self.requests.append(req)
            if self._script:
                return self._script.popleft()
        return self.responder(req) if self.responder else None

    def stall_wait(self, seconds: float) -> None:
        self._closing.wait(seconds)

    @property
    def closing(self) -> threading.Event:
        """Set when the server closes (stalls and ``Raw`` waits end)."""
        return self._closing


# -- the offline mock provider -------------------------------------------------

_CALL_RE = re.compile(r"\bcall\s+([A-Za-z0-9_-]{1,64})(?:[ \t]+(.*))?", re.S)


def _call_args(rest: str | None, schema: dict[str, Any]) -> dict[str, Any]:
    """The arguments of ``call NAME REST``: REST as a JSON object, or, when it
    is plain text (``call read README.md``, ``call bash ls -la``), REST as the
    tool's first required parameter (the first declared one when none is)."""
    rest = (rest or "").strip()
    if not rest:
        return {}
    if rest.startswith("{"):
        try:
            args = json.loads(rest[: rest.rfind("}") + 1])
        except ValueError:
            return {}
        return args if isinstance(args, dict) else {}
    props = schema.get("properties")
    names = [n for n in schema.get("required") or [] if isinstance(n, str)]
    names += list(props) if isinstance(props, dict) else []
    return {names[0]: rest} if names else {}


def _last_turn(
    req: RecordedRequest,
) -> tuple[str, list[str], dict[str, dict[str, Any]]]:
    """(user text, tool result texts, declared tool schemas by name) of a
    request: the messages after the last assistant message, read with the
    wire's request parser (``panto.providers.codec``)."""
    body = req.json
    if not isinstance(body, dict):
        return "", [], {}
    try:
        parsed = parse_request(req.wire, {"model": "", **body})
    except (RequestError, ValueError):  # (ValueError: a wire without a parser)
        return "", [], {}
    text = ""
    results: list[str] = []
    for m in reversed(parsed.conversation.messages):
        if m.role == "assistant":
            break
        if m.role == "user" and not text:
            text = "".join(b.text for b in m.content if isinstance(b, Text))
        for r in m.content:
            if isinstance(r, ToolResultBlock):  # images as [image: MEDIA_TYPE], never their data
                parts = [r.content] if r.content else []
                parts += [f"[image: {i.media_type}]" for i in r.images]
                results.append(" ".join(parts))
    return text, results, {t.name: t.schema for t in parsed.tools}


def echo_responder(req: RecordedRequest) -> Reply:
    """The ``mock`` provider's model: echoes the prompt after a line of
    thinking; ``call NAME {json}`` (or ``call NAME TEXT``, TEXT becoming the
    first required parameter) calls a declared tool; a tool result is
    summarised."""
    text, results, schemas = _last_turn(req)
    size = max(1, len(req.body) // 4)
    if text.startswith("<conversation>\n"):  # Agent.compact's request
        said = re.findall(r"^## user\n(.*)$", text, re.M)
        answer = f"Summary: {len(said)} user message(s)" + (
            f"; the last: {said[-1]}" if said else ""
        )
        return Reply([Text(answer)], usage=Usage(input_tokens=size, output_tokens=len(answer) // 4))
    if results and not text.strip():  # (a prompt sent after a cancelled call comes with its result)
        answer = "The tool returned: " + "; ".join(r[:200] for r in results)
        blocks: list[Block] = [Text(answer)]
    else:
        m = _CALL_RE.search(text)
        if m and m.group(1) in schemas:
            args = _call_args(m.group(2), schemas[m.group(1)])
            blocks = [
                Thinking(f"The user wants me to call {m.group(1)}.", "mock-signature"),
                Text(f"Calling {m.group(1)}."),
                ToolUse(f"toolu_mock{next(_ids):06d}", m.group(1), args),
            ]
        else:
            prompt = text.strip() or "(nothing)"
            blocks = [
                Thinking(
                    f"The user said {len(prompt.split())} word(s); I will echo them.",
                    "mock-signature",
                ),
                Text(f"You said: {prompt}"),
            ]
    out = sum(len(getattr(b, "text", "")) for b in blocks) // 4 + 1
    return Reply(blocks, usage=Usage(input_tokens=size, output_tokens=out), chunk=6, delay=0.002)


_mock: ScriptedServer | None = None
_mock_lock = threading.Lock()


def mock_server() -> ScriptedServer:
    """The process-wide server behind the ``mock`` provider (started on
    first use, answering with ``echo_responder``)."""
    global _mock
    with _mock_lock:
        if _mock is None:
            _mock = ScriptedServer(responder=echo_responder).start()
        return _mock

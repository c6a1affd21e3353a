"""Providers registered by extensions (``panto.config.ext_providers``).

Two kinds:

- an HTTP provider on an existing wire whose URL, headers and key a
  callable computes per request (OAuth refresh, signed requests): the wire's
  own provider class, with ``build_request`` asking ``prepare`` first;
- a provider that produces the turn itself (``respond``): it is served by
  an in-process loopback server speaking the Anthropic Messages wire, so
  the turn loop, its retries, cancellation and decoding are the same code
  as for every other provider.  ``respond`` gets the request read back
  (system, messages, tools) and emits events, each written to the stream
  as it comes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ..config import Config
from ..config.ext_providers import ExtensionProvider, get
from ..conversation import Message, Text, Thinking, ToolResultBlock, ToolUse, Usage
from ..errors import ConfigError, ProviderError
from ..events import (
    BlockComplete,
    BlockStart,
    ContentDelta,
    Event,
    MessageComplete,
    MessageStart,
    ToolDetails,
)
from .base import PreparedRequest, Provider
from .transport import register_secrets, secret_header_values

__all__ = ["make_extension_provider"]

#: the wire a ``respond`` provider's loopback server speaks
EVENTS_WIRE = "anthropic-messages"


def make_extension_provider(config: Config, wire_class: type[Provider]) -> Provider:
    """The provider for ``config`` (whose provider an extension registered);
    ``wire_class`` is the provider class of its wire."""
    ext = get(config.provider)
    if ext is None:
        raise ConfigError(f"provider {config.provider!r} is not registered by any loaded extension")
    if ext.respond is not None:
        server = _event_server(ext)
        return wire_class(dataclasses.replace(config, base_url=server.url))
    return _http_provider(wire_class, ext, config)


def _http_provider(base: type[Provider], ext: ExtensionProvider, config: Config) -> Provider:
    class ExtensionHTTPProvider(base):  # type: ignore[valid-type,misc]
        """The wire's provider; ``prepare`` sets the URL, headers and key of each request."""

        #: ``prepare`` is Lua (it may sleep or call out): the async driver
        #: builds the request in a worker thread
        build_blocks = True

        def build_request(self, messages: Sequence[Any], tools: Sequence[Any]) -> PreparedRequest:
            assert ext.prepare is not None
            self.api_key = None
            self.extra_headers = dict(config.resolve_headers())
            info = {
                "provider": ext.name,
                "model": config.model,
                "wire": self.wire,
                "url": self.url,
                "headers": self.headers(),
            }
            try:
                out = ext.prepare(info)
            except Exception as e:  # noqa: BLE001 - the extension's failure, named
                raise ProviderError(
                    f"provider {ext.name} ({ext.origin}): prepare failed: {e}", retryable=False
                ) from None
            if not isinstance(out, Mapping):
                out = {}
            key = out.get("api_key")
            self.api_key = str(key) if key else None
            headers = out.get("headers")
            if isinstance(headers, Mapping):
                self.extra_headers.update({str(k): str(v) for k, v in headers.items()})
            secrets = [self.api_key] if self.api_key else []
            secrets += secret_header_values(self.extra_headers)
            new = tuple(s for s in dict.fromkeys(secrets) if s not in self.secrets)
            if new:
                self.secrets = (*self.secrets, *new)
                register_secrets(new, owner=self)
            req = super().build_request(messages, tools)
            url = out.get("url")
            if url:
                req = PreparedRequest(str(url), req.headers, req.body, self.secrets)
            return PreparedRequest(req.url, req.headers, req.body, self.secrets)

    return ExtensionHTTPProvider(config)


# -- providers that produce the turn themselves ------------------------------------

_servers: dict[str, tuple[ExtensionProvider, Any]] = {}
_servers_lock = threading.Lock()


def _event_server(ext: ExtensionProvider) -> Any:
    """The loopback server of ``ext`` (one per registration, started on first use)."""
    from ..testing import ScriptedServer

    with _servers_lock:
        got = _servers.get(ext.name)
        if got is not None and got[0] is ext:
            return got[1]
        if got is not None:
            got[1].close()
        server = ScriptedServer()
        server.responder = lambda req: _respond(ext, server, req)
        server.start()
        _servers[ext.name] = (ext, server)
        return server


def request_view(body: Any) -> dict[str, Any]:
    """What ``respond`` gets: an Anthropic Messages body read back into
    ``{model, system, messages, tools}``; a message is ``{role, text,
    tool_calls?, tool_results?}``."""
    from .codec import parse_request

    parsed = parse_request(EVENTS_WIRE, body)
    msgs: list[dict[str, Any]] = []
    system: list[str] = []
    for m in parsed.conversation.messages:
        text = "".join(b.text for b in m.content if isinstance(b, Text))
        if m.role == "system":
            system.append(text)
            continue
        d: dict[str, Any] = {"role": m.role, "text": text}
        calls = [
            {"id": b.id, "name": b.name, "input": b.input}
            for b in m.content
            if isinstance(b, ToolUse)
        ]
        if calls:
            d["tool_calls"] = calls
        results = [
            {"id": b.tool_use_id, "content": b.content, "is_error": b.is_error}
            for b in m.content
            if isinstance(b, ToolResultBlock)
        ]
        if results:
            d["tool_results"] = results
        msgs.append(d)
    return {
        "model": parsed.model,
        "system": "\n\n".join(system),
        "messages": msgs,
        "tools": [
            {"name": t.name, "description": t.description, "schema": t.schema} for t in parsed.tools
        ],
    }


_ids = iter(range(1, 1 << 62))


class EventAssembler:
    """The events a ``respond`` provider emits, as panto stream events (one
    block per run of text or thinking, one per tool call)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.index = -1
        self.kind: str | None = None
        self.parts: list[str] = []
        self.blocks: list[Any] = []
        self.usage = Usage()
        self.stop: str | None = None

    def start(self) -> list[Event]:
        return [MessageStart(f"msg_ext{next(_ids):06d}", self.model, Usage())]

    def _close(self) -> list[Event]:
        if self.kind is None:
            return []
        text = "".join(self.parts)
        block = Text(text) if self.kind == "text" else Thinking(text, "extension")
        self.blocks.append(block)
        self.kind = None
        return [BlockComplete(self.index, block)]

    def feed(self, ev: Any) -> list[Event]:
        """The stream events of one emitted event; ValueError when it is malformed."""
        if not isinstance(ev, Mapping):
            raise ValueError(f"an event must be a table, got {type(ev).__name__}")
        kind = ev.get("type")
        if kind in ("text", "thinking"):
            t = str(ev.get("text", ""))
            if not t:
                return []
            out: list[Event] = []
            if self.kind != kind:
                out += self._close()
                self.index += 1
                self.kind, self.parts = kind, []
                out.append(BlockStart(self.index, kind))
            self.parts.append(t)
            out.append(ContentDelta(self.index, kind, t))
            return out
        if kind == "tool_call":
            args = ev.get("input")
            if not isinstance(args, Mapping):
                args = {}
            name = ev.get("name")
            if not isinstance(name, str) or not name:
                raise ValueError("a tool_call event needs a 'name'")
            out = self._close()
            self.index += 1
            cid = str(ev.get("id") or f"toolu_ext{next(_ids):06d}")
            block = ToolUse(cid, name, dict(args))
            self.blocks.append(block)
            raw = json.dumps(block.input, ensure_ascii=False, separators=(",", ":"))
            return [
                *out,
                BlockStart(self.index, "tool_use"),
                ToolDetails(self.index, cid, name),
                ContentDelta(self.index, "tool_use", raw),
                BlockComplete(self.index, block),
            ]
        if kind == "usage":
            self.usage = Usage(
                input_tokens=int(ev.get("input_tokens") or 0),
                output_tokens=int(ev.get("output_tokens") or 0),
            )
            return []
        if kind == "stop":
            self.stop = str(ev.get("reason") or "stop")
            return []
        raise ValueError(f"unknown event type {kind!r}")

    def finish(self) -> list[Event]:
        out = self._close()
        has_calls = any(isinstance(b, ToolUse) for b in self.blocks)
        stop = self.stop or ("tool_use" if has_calls else "stop")
        msg = Message("assistant", tuple(self.blocks), self.usage, stop, model=self.model)
        return [*out, MessageComplete(msg, stop, self.usage)]


_DONE = object()
_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
    b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
)


def _respond(ext: ExtensionProvider, server: Any, req: Any) -> Any:
    """The loopback server's answer to one request: ``respond`` runs in a
    thread of its own and each event it emits is written as it comes."""
    import queue

    from ..testing import HTTPError, Raw

    with contextlib.suppress(ValueError):
        server.requests.remove(req)  # nothing is kept of a served request
    try:
        view = request_view(req.json)
    except Exception as e:  # noqa: BLE001 - panto's own request: should not happen
        return HTTPError(
            400, {"type": "error", "error": {"type": "invalid_request_error", "message": str(e)}}
        )
    view["provider"] = ext.name
    q: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def run() -> None:
        assert ext.respond is not None
        try:
            ext.respond(view, q.put)
            q.put(_DONE)
        except Exception as e:  # noqa: BLE001 - the turn gets it as the provider's error
            q.put(e)

    def write(conn: Any) -> None:
        from .codec import make_encoder

        enc = make_encoder(EVENTS_WIRE)
        asm = EventAssembler(str(view.get("model") or ""))

        def send(events: list[Event]) -> bool:
            data = b"".join(b for ev in events for b in enc.encode(ev))
            return not data or conn.send(b"%x\r\n%s\r\n" % (len(data), data))

        if not conn.send(_HEAD) or not send(asm.start()):
            return
        threading.Thread(target=run, name=f"panto-provider-{ext.name}", daemon=True).start()
        while True:
            item = q.get()
            try:
                if item is _DONE:
                    send(asm.finish())
                    conn.send(b"0\r\n\r\n")
                    return
                if isinstance(item, Exception):
                    raise item
                if not send(asm.feed(item)):
                    return  # the turn went away (cancelled): the rest is dropped
            except Exception as e:  # noqa: BLE001 - one in-stream error event ends it
                msg = f"provider {ext.name} ({ext.origin}) failed: {e}"
                err = enc.error("invalid_request_error", msg)
                conn.send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(err), err))
                return

    return Raw(write)

"""Providers registered by extensions (``panto.config.ext_providers``).

Two kinds:

- an HTTP provider on an existing wire whose URL, headers and key a
  callable computes per request (OAuth refresh, signed requests): the wire's
  own provider class, with ``build_request`` asking ``prepare`` first;
- a provider that produces the turn itself (``respond``): it is served by
  an in-process loopback server speaking the Anthropic Messages wire, so
  the turn loop, its retries, cancellation and decoding are the same code
  as for every other provider.  ``respond`` gets the request read back
  (system, messages, tools) and returns the events it emitted.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ..config import Config
from ..config.ext_providers import ExtensionProvider, get
from ..conversation import Text, Thinking, ToolResultBlock, ToolUse, Usage
from ..errors import ConfigError, ProviderError
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

        def build_request(self, messages: Sequence[Any], tools: Sequence[Any]) -> PreparedRequest:
            assert ext.prepare is not None
            self.api_key = None
            self.extra_headers = dict(config.resolve_headers())
            info = {
                "provider": ext.name,
                "model": self.config.model,
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
                register_secrets(new)
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
        server = ScriptedServer(responder=lambda req: _respond(ext, req)).start()
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


_call_ids = iter(range(1, 1 << 62))


def reply_of(events: Sequence[Any]) -> Any:
    """The ``panto.testing.Reply`` for the events ``respond`` emitted."""
    from ..testing import Reply

    blocks: list[Any] = []
    usage = Usage()
    stop: str | None = None
    for ev in events:
        if not isinstance(ev, Mapping):
            raise ValueError(f"an event must be a table, got {type(ev).__name__}")
        kind = ev.get("type")
        if kind == "text":
            t = str(ev.get("text", ""))
            if blocks and type(blocks[-1]) is Text:
                blocks[-1] = Text(blocks[-1].text + t)
            else:
                blocks.append(Text(t))
        elif kind == "thinking":
            blocks.append(Thinking(str(ev.get("text", "")), "extension"))
        elif kind == "tool_call":
            args = ev.get("input")
            if not isinstance(args, Mapping):
                args = {}
            cid = str(ev.get("id") or f"toolu_ext{next(_call_ids):06d}")
            blocks.append(ToolUse(cid, str(ev["name"]), dict(args)))
        elif kind == "usage":
            usage = Usage(
                input_tokens=int(ev.get("input_tokens") or 0),
                output_tokens=int(ev.get("output_tokens") or 0),
            )
        elif kind == "stop":
            stop = str(ev.get("reason") or "stop")
        else:
            raise ValueError(f"unknown event type {kind!r}")
    return Reply(blocks, stop_reason=stop, usage=usage, chunk=64)


def _respond(ext: ExtensionProvider, req: Any) -> Any:
    from ..testing import HTTPError

    assert ext.respond is not None
    try:
        view = request_view(req.json)
        view["provider"] = ext.name
        return reply_of(ext.respond(view))
    except Exception as e:  # noqa: BLE001 - reported to the turn as the provider's error
        msg = f"provider {ext.name} ({ext.origin}) failed: {e}"
        return HTTPError(
            400, {"type": "error", "error": {"type": "invalid_request_error", "message": msg}}
        )

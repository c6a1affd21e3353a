"""The proxy routes: ``/v1/chat/completions`` and ``/v1/messages`` in front
of any configured provider, on either wire.

- The request's ``model`` is ``PROVIDER/MODEL`` from panto's config or a
  ``[serve.models.ALIAS]``; the alias's fallbacks are tried, in order, only
  before the first byte reaches the client.
- **Same wire**: the upstream's bytes pass through unchanged, teed through
  the C decoder for usage and errors.  **Cross wire**: the request is read
  into panto's ``Conversation`` and serialized for the upstream's wire; the
  upstream stream is decoded by the C core and encoded for the client's wire
  (one write per upstream read).
- Errors before the first byte are HTTP errors in the client's wire shape
  (``Retry-After`` kept); after it, an in-band error event, never a clean end
  for a cut upstream and never ``[DONE]`` after an error.
- Upstream requests always stream: a non-streamed client request is
  answered with the assembled message once the stream completes.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..config import Config
from ..conversation import Message, Thinking, ToolUse
from ..errors import ConfigError, DecodeError, PantoError, ProviderError, TruncatedStream
from ..events import MessageComplete
from ..logs import get_logger
from ..providers import make_provider
from ..providers.base import RETRYABLE_STATUS, Provider, redact
from ..providers.clients import AsyncClients
from ..providers.codec import (
    ParsedRequest,
    RequestError,
    make_encoder,
    parse_request,
    response_body,
)
from ..providers.transport import aiter_reads
from ..start_gate import admit
from .settings import ApiKey, ServeSettings
from .wire_errors import error_body, error_status

__all__ = ["Proxy", "ProxyError", "Target"]

log = get_logger("panto.serve")

#: Bytes of an upstream error body kept (the rest is not read).
_ERROR_BODY_MAX = 64 * 1024
#: Signed thinking blocks remembered for OpenAI clients (by tool call id).
_SIGNATURES_MAX = 10_000


class ProxyError(Exception):
    """An error answered before the first byte: status, message, the
    provider's error type, and ``Retry-After`` when the upstream sent one."""

    def __init__(
        self, status: int, message: str, type: str | None = None, retry_after: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.retry_after = retry_after


@dataclass
class Target:
    """One upstream model: ``spec`` is ``provider/model``."""

    spec: str
    config: Config
    provider: Provider

    @property
    def wire(self) -> str:
        return self.provider.wire


@dataclass
class Outcome:
    """What the ledger records of one proxied request."""

    key: str
    alias: str
    upstream: str = ""
    status: str = "ok"
    http_status: int = 200
    usage: Any = None
    model: str = ""
    started: float = 0.0


class SignatureStore:
    """Signed thinking an Anthropic upstream returned to an OpenAI client
    (whose wire has no place for the signature), by the tool call ids of
    the same message: turn 2 of a tool loop sends it back intact."""

    def __init__(self, limit: int = _SIGNATURES_MAX) -> None:
        self._by_call: OrderedDict[str, tuple[Thinking, ...]] = OrderedDict()
        self._limit = limit

    def remember(self, message: Message) -> None:
        thinking = tuple(b for b in message.content if isinstance(b, Thinking) and b.signature)
        if not thinking:
            return
        for b in message.content:
            if isinstance(b, ToolUse):
                self._by_call[b.id] = thinking
                self._by_call.move_to_end(b.id)
        while len(self._by_call) > self._limit:
            self._by_call.popitem(last=False)

    def restore(self, parsed: ParsedRequest) -> ParsedRequest:
        msgs = list(parsed.conversation)
        changed = False
        for i, m in enumerate(msgs):
            if m.role != "assistant" or any(isinstance(b, Thinking) for b in m.content):
                continue
            ids = [b.id for b in m.content if isinstance(b, ToolUse)]
            kept = next((self._by_call[x] for x in ids if x in self._by_call), None)
            if kept:
                msgs[i] = replace(m, content=(*kept, *m.content))
                changed = True
        if not changed:
            return parsed
        from ..conversation import Conversation

        return replace(parsed, conversation=Conversation(msgs))


class Proxy:
    """The proxy's state: targets built from panto's config, the HTTP
    clients (the process host's, shared with the served sessions), the
    signature store, and requests in flight."""

    def __init__(
        self,
        config: Config,
        settings: ServeSettings,
        record: Callable[[Outcome], None] | None = None,
        clients: AsyncClients | None = None,
    ) -> None:
        self.config = config
        self.settings = settings
        self.record = record or (lambda _o: None)
        self.signatures = SignatureStore()
        self.inflight = 0
        self._targets: dict[str, Target] = {}
        if clients is None:
            from ..app import default_host

            clients = default_host().http_clients
        clients.max_connections = settings.upstream_connections
        self.clients = clients

    # -- models and targets -------------------------------------------------------

    def chain(self, model: str) -> list[str]:
        """The targets for a requested model, primary first."""
        alias = self.settings.aliases.get(model)
        if alias is not None:
            return [alias.target, *alias.fallbacks]
        if "/" in model:
            return [model]
        raise ProxyError(
            404,
            f"unknown model {model!r}: use PROVIDER/MODEL from panto's config or one of the "
            f"aliases ({', '.join(sorted(self.settings.aliases)) or 'none configured'})",
            "not_found_error",
        )

    def target(self, spec: str) -> Target:
        t = self._targets.get(spec)
        if t is None:
            try:
                cfg = self.config.with_model(spec)
            except ConfigError as e:  # (no such provider)
                raise ProxyError(404, f"model {spec!r}: {e}", "not_found_error") from None
            try:
                _require_key(cfg)
                provider = make_provider(cfg)
            except ConfigError as e:
                # the server's own set-up, not the client's request: a 404
                # told the client the model did not exist (both SDKs raised
                # NotFoundError)
                raise ProxyError(500, f"model {spec!r}: {e}", "api_error") from None
            t = self._targets[spec] = Target(spec, cfg, provider)
        return t

    def model_ids(self, key: ApiKey | None) -> list[str]:
        """What ``/v1/models`` lists: the aliases, then the default model of
        each configured provider this server has a key for (a listed model
        a client cannot use would only answer "no API key")."""
        ids = list(self.settings.aliases)
        for name, p in sorted(self.config.providers.items()):
            if p.default_model and _has_key(p):
                ids.append(f"{name}/{p.default_model}")
        return [m for m in ids if key is None or key.allows(m)]

    def client(self, base_url: str) -> Any:
        """The HTTP client of ``base_url``'s origin: the host's shared
        clients (``Host.http_clients``: panto's asyncio HTTP/1.1 client, a
        pool of at most ``upstream_connections`` per origin with O(1)
        acquire and release; httpx's when a proxy is configured in the
        environment), the same the served agent sessions use."""
        return self.clients.get(base_url)

    # -- one request ----------------------------------------------------------------

    def upstream_body(
        self, target: Target, parsed: ParsedRequest, raw: dict[str, Any], client_wire: str
    ) -> bytes:
        model = target.config.model
        if target.wire == client_wire:  # same wire: the client's body, model and streaming set
            body = dict(raw)
            body["model"] = model
            body["stream"] = True
            if client_wire == "openai-chat":
                body["stream_options"] = {
                    **(body.get("stream_options") or {}),
                    "include_usage": True,
                }
        else:
            if client_wire == "openai-chat" and target.wire == "anthropic-messages":
                parsed = self.signatures.restore(parsed)
            body = target.provider.body(list(parsed.conversation), parsed.tools)
            _carry_options(body, parsed, target.wire, client_wire)
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()

    def upstream_headers(
        self, target: Target, incoming: Mapping[str, str], client_wire: str
    ) -> dict[str, str]:
        headers = dict(target.provider.headers())
        if target.wire == client_wire == "anthropic-messages":
            beta = incoming.get("anthropic-beta")
            if beta:
                headers["anthropic-beta"] = beta
        return headers

    async def open(
        self,
        chain: list[str],
        parsed: ParsedRequest,
        raw: dict[str, Any],
        client_wire: str,
        incoming: Mapping[str, str],
    ) -> tuple[Target, Any]:
        """The first target that answers 2xx, with its open response;
        fallbacks only before the first byte (here, every failure is)."""
        from ..providers import transport as tp

        last: ProxyError | None = None
        cfg = self.config
        for i, spec in enumerate(chain):
            more = i + 1 < len(chain)
            target = self.target(spec)
            try:
                resp = await tp.asend(
                    self.client(target.provider.base_url),
                    target.provider.url,
                    self.upstream_body(target, parsed, raw, client_wire),
                    self.upstream_headers(target, incoming, client_wire),
                    connect=cfg.connect_timeout,
                    read=cfg.read_timeout,
                    first_byte=None,
                )
            except tp.errors() as e:
                last = ProxyError(
                    502,
                    f"upstream {spec}: {type(e).__name__}: {redact(str(e), target.provider.secrets)}",
                )
                log.info("upstream %s failed: %s", spec, last.message)
                if more:
                    continue
                raise last from None
            if resp.status_code < 300:
                return target, resp
            body = await _read_bounded(resp)
            await resp.aclose()
            err = target.provider.error_from_response(resp.status_code, resp.headers, body)
            last = ProxyError(
                resp.status_code, err.message, err.type, resp.headers.get("retry-after")
            )
            if more and (resp.status_code in RETRYABLE_STATUS):
                log.info("upstream %s answered %d; trying %s", spec, resp.status_code, chain[i + 1])
                continue
            raise last
        assert last is not None
        raise last

    async def handle(
        self, client_wire: str, raw_bytes: bytes, incoming: Mapping[str, str], key: ApiKey | None
    ) -> tuple[int, dict[str, str], bytes | AsyncIterator[bytes]]:
        """Status, headers and body (bytes, or a stream of bytes)."""
        started = time.monotonic()
        await admit()  # a burst of clients' requests takes turns with the loop
        try:
            raw = json.loads(raw_bytes or b"null")
        except ValueError as e:
            raise ProxyError(
                400, f"request body is not JSON: {e}", "invalid_request_error"
            ) from None
        if not isinstance(raw, dict):
            raise ProxyError(400, "request body must be a JSON object", "invalid_request_error")
        try:
            parsed = parse_request(client_wire, raw)
        except RequestError as e:
            raise ProxyError(400, e.message, "invalid_request_error") from None
        if key is not None and not key.allows(parsed.model):
            raise ProxyError(
                403, f"this key may not use model {parsed.model!r}", "permission_error"
            )
        chain = self.chain(parsed.model)
        target, resp = await self.open(chain, parsed, raw, client_wire, incoming)
        outcome = Outcome(key.name if key else "", parsed.model, target.spec, started=started)
        headers = {"x-panto-upstream": target.spec}
        if parsed.stream:
            headers.update({"content-type": "text/event-stream", "cache-control": "no-cache"})
            return 200, headers, self._relay(target, resp, parsed, client_wire, outcome)
        message = await self._collect(target, resp, outcome)
        if client_wire == "openai-chat" and target.wire == "anthropic-messages":
            self.signatures.remember(message)
        headers["content-type"] = "application/json"
        if client_wire == "openai-chat" and message.usage is not None:
            message = replace(message, usage=_openai_usage(message.usage))
        body = response_body(client_wire, message, model=parsed.model)
        return 200, headers, json.dumps(body, ensure_ascii=False).encode()

    async def _collect(self, target: Target, resp: Any, outcome: Outcome) -> Message:
        from ..decoder import StreamDecoder
        from ..providers import transport as tp

        dec = StreamDecoder(target.wire)
        message: Message | None = None
        self.inflight += 1
        try:
            async for chunk in aiter_reads(resp):
                dec.feed(chunk)
                del chunk  # (copied: not held while the next read waits)
                done = _completion(dec)
                if done is not None:
                    message, outcome.usage = done.message, done.usage
            dec.close()
        except ProviderError as e:
            outcome.status, outcome.http_status = "error", 502
            status = e.status if e.status and e.status >= 400 else 502
            raise ProxyError(status, redact(e.message, target.provider.secrets), e.type) from None
        except (TruncatedStream, DecodeError) as e:
            outcome.status, outcome.http_status = "error", 502
            raise ProxyError(502, f"upstream {target.spec}: {e}") from None
        except tp.errors() as e:  # the connection failed mid-body (a cut, a reset)
            outcome.status, outcome.http_status = "error", 502
            msg = f"upstream {target.spec}: {type(e).__name__}: {e}"
            raise ProxyError(502, redact(msg, target.provider.secrets)) from None
        finally:
            self.inflight -= 1
            await resp.aclose()
            self.record(outcome)
        assert message is not None
        return message

    async def _relay(
        self, target: Target, resp: Any, parsed: ParsedRequest, client_wire: str, outcome: Outcome
    ) -> AsyncIterator[bytes]:
        from ..decoder import StreamDecoder

        same = target.wire == client_wire
        dec = StreamDecoder(target.wire)
        enc = make_encoder(client_wire, model=parsed.model)
        remember = client_wire == "openai-chat" and target.wire == "anthropic-messages"

        def take(out: list[bytes]) -> None:
            # one read's events: the usage noted, cross-wire encoded into
            # ``out`` (a function of its own, so that its loop's last event,
            # a delta's text, is not held while the next read waits)
            for ev in dec:
                if isinstance(ev, MessageComplete):
                    outcome.usage = ev.usage
                    if remember:
                        self.signatures.remember(ev.message)
                if not same:
                    out += enc.encode(_usage_for(client_wire, ev))

        self.inflight += 1
        try:
            async for chunk in aiter_reads(resp):
                dec.feed(chunk)
                out: list[bytes] = []
                try:
                    take(out)
                except ProviderError as e:  # an error event inside the 200 stream
                    outcome.status = "error"
                    # (same wire: the upstream's own bytes, its error event included)
                    msg = redact(e.message, target.provider.secrets)
                    if same:
                        yield _scrub(chunk, target.provider.secrets)
                    else:
                        yield b"".join(out) + enc.error(e.type or "api_error", msg)
                    return
                except DecodeError as e:
                    outcome.status = "error"
                    yield b"".join(out) + enc.error(
                        "api_error", f"upstream {target.spec} sent a bad stream: {e}"
                    )
                    return
                data = chunk if same else b"".join(out)
                del chunk, out  # (not held while the next read waits)
                if data:
                    yield data
                del data
            try:
                dec.close()
            except (TruncatedStream, DecodeError) as e:
                outcome.status = "error"
                yield enc.error("api_error", f"upstream {target.spec} ended the stream early: {e}")
        except asyncio.CancelledError:  # the client went away: the upstream closes below
            outcome.status = "cancelled"
            raise
        except PantoError as e:
            outcome.status = "error"
            yield enc.error("api_error", redact(str(e), target.provider.secrets))
        except Exception as e:  # noqa: BLE001 - the upstream connection failed mid-stream
            outcome.status = "error"
            msg = redact(
                f"upstream {target.spec}: {type(e).__name__}: {e}", target.provider.secrets
            )
            yield enc.error("api_error", msg)
        finally:
            self.inflight -= 1
            await resp.aclose()
            self.record(outcome)


def _openai_usage(u: Any) -> Any:
    """OpenAI's ``prompt_tokens`` counts every input token: Anthropic's cache
    writes are folded into the input (cache reads stay ``cached_tokens``)."""
    if not u.cache_write_tokens:
        return u
    return replace(u, input_tokens=u.input_tokens + u.cache_write_tokens, cache_write_tokens=0)


def _usage_for(client_wire: str, ev: Any) -> Any:
    if client_wire == "openai-chat" and isinstance(ev, MessageComplete) and ev.usage is not None:
        u = _openai_usage(ev.usage)
        if u is not ev.usage:
            return replace(ev, usage=u, message=replace(ev.message, usage=u))
    return ev


def _scrub(data: bytes, secrets: tuple[str, ...]) -> bytes:
    """``data`` with panto's upstream keys taken out (an upstream that
    echoes the key in an error event must not hand it to the client)."""
    for secret in secrets:
        if secret:
            data = data.replace(secret.encode(), b"[redacted]")
    return data


async def _read_bounded(resp: Any) -> bytes:
    data = bytearray()
    async for chunk in resp.aiter_raw():
        data += chunk
        if len(data) >= _ERROR_BODY_MAX:
            break
    return bytes(data[:_ERROR_BODY_MAX])


def _carry_options(body: dict[str, Any], parsed: ParsedRequest, upstream: str, client: str) -> None:
    """The client's sampling options in the upstream wire's names."""
    o = parsed.options
    if parsed.max_tokens is not None:
        for f in ("max_tokens", "max_completion_tokens"):
            if f in body:
                body[f] = parsed.max_tokens
    for f in ("temperature", "top_p"):
        if f in o:
            body[f] = o[f]
    field = "stop" if client == "openai-chat" else "stop_sequences"
    stop = o.get(field)
    if stop:
        stops = [stop] if isinstance(stop, str) else stop
        if not isinstance(stops, list) or not all(isinstance(x, str) for x in stops):
            raise ProxyError(
                400,
                f"body.{field}: expected a string or an array of strings",
                "invalid_request_error",
            )
        body["stop_sequences" if upstream == "anthropic-messages" else "stop"] = stops
    choice = o.get("tool_choice")
    if choice is not None and parsed.tools:
        mapped = _tool_choice(choice, upstream)
        if mapped is not None:
            body["tool_choice"] = mapped


def _tool_choice(choice: Any, upstream: str) -> Any:
    """``tool_choice`` across wires (auto, none, required/any, one tool)."""
    kind, name = None, None
    if isinstance(choice, str):
        kind = {"auto": "auto", "none": "none", "required": "any"}.get(choice)
    elif isinstance(choice, dict):
        t = choice.get("type")
        if t in ("auto", "none", "any"):
            kind = t
        elif t == "tool":
            kind, name = "tool", choice.get("name")
        elif t == "function":
            kind, name = "tool", (choice.get("function") or {}).get("name")
    if kind is None:
        return None
    if upstream == "anthropic-messages":
        return {"type": "tool", "name": name} if kind == "tool" else {"type": kind}
    if kind == "tool":
        return {"type": "function", "function": {"name": name}}
    return {"any": "required"}.get(kind, kind)


def error_response(client_wire: str, e: ProxyError) -> tuple[int, dict[str, str], bytes]:
    headers = {"content-type": "application/json"}
    if e.retry_after:
        headers["retry-after"] = e.retry_after
    return (
        error_status(client_wire, e.status),
        headers,
        error_body(client_wire, e.status, e.message, e.type),
    )


def _completion(dec: Any) -> MessageComplete | None:
    """The ``MessageComplete`` among one read's events, if there is one (a
    function of its own, so that its loop's last event, a delta's text, is
    not held while the next read waits)."""
    done = None
    for ev in dec:
        if isinstance(ev, MessageComplete):
            done = ev
    return done


def _has_key(p: Any) -> bool:
    """Whether provider config ``p`` can make requests as far as keys go
    (its key, its variable set, or none needed)."""
    return bool(
        not p.requires_key or p.api_key or (p.api_key_env and os.environ.get(p.api_key_env))
    )


def _require_key(cfg: Config) -> None:
    """A missing upstream key is for whoever runs the server to fix, not
    the client who reads the error: say so, and where the key goes."""
    p = cfg.provider_config
    try:
        cfg.resolve_api_key()
    except ConfigError:
        fix = f"api_key in [providers.{p.name}]"
        if p.api_key_env:
            fix = f"{p.api_key_env} in panto serve's environment (or {fix})"
        raise ConfigError(
            f"panto serve has no API key for provider {p.name!r}: set {fix} and restart it"
        ) from None

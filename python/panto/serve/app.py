"""The ASGI app of ``panto serve`` (Starlette): the proxy routes, models,
token counting, health and the OpenAPI document.  ``build_app(config)``
is all a server (uvicorn, granian) needs."""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from ..config import Config
from ..logs import get_logger
from .agents import APPROVAL_TIMEOUT, AgentHub, HubError
from .ledger import Ledger
from .proxy import Proxy, ProxyError, error_response
from .settings import ApiKey, ServeSettings, hash_key
from .wire_errors import error_body

__all__ = ["build_app"]

log = get_logger("panto.serve")

OPENAI = "openai-chat"
ANTHROPIC = "anthropic-messages"


class AuthError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a client sent: ``Authorization: Bearer`` (both SDKs) or
    ``x-api-key`` (Claude Code and curl users)."""
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer " and auth[7:].strip():
        return auth[7:].strip()
    key = headers.get("x-api-key", "").strip()
    return key or None


def authenticate(headers: Mapping[str, str], settings: ServeSettings) -> ApiKey | None:
    """The caller's key (None: no keys are configured, anyone on loopback
    may call); raises ``AuthError`` (401) for a missing or wrong key."""
    if not settings.keys:
        return None
    given = presented_key(headers)
    if given is None:
        raise AuthError(401, "missing API key: send Authorization: Bearer KEY or x-api-key: KEY")
    digest = hash_key(given)
    for k in settings.keys:
        if hmac.compare_digest(digest, k.sha256):
            return k
    raise AuthError(401, "invalid API key")


def build_app(config: Config, settings: ServeSettings | None = None) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    settings = settings or ServeSettings.from_config(config.data.get("serve") or {})
    ledger = Ledger.open(config)
    proxy = Proxy(config, settings, ledger.record)
    state = {"draining": False}

    def wire_error(wire: str, status: int, message: str, type: str | None = None) -> Response:
        return Response(
            error_body(wire, status, message, type), status, media_type="application/json"
        )

    hot = {
        "/v1/chat/completions": ProxyEndpoint(proxy, settings, OPENAI),
        "/v1/messages": ProxyEndpoint(proxy, settings, ANTHROPIC),
    }

    async def count_tokens(request: Request) -> Response:
        try:
            key = authenticate(request.headers, settings)
        except AuthError as e:
            return wire_error(ANTHROPIC, e.status, e.message)
        try:
            return await _count_tokens(proxy, await request.body(), key)
        except ProxyError as e:
            s, h, b = error_response(ANTHROPIC, e)
            return Response(b, s, headers=h)

    async def models(request: Request) -> Response:
        anthropic = "anthropic-version" in request.headers
        try:
            key = authenticate(request.headers, settings)
        except AuthError as e:
            return wire_error(ANTHROPIC if anthropic else OPENAI, e.status, e.message)
        ids = proxy.model_ids(key)
        now = int(time.time())
        if anthropic:
            data = [
                {"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"}
                for m in ids
            ]
            return JSONResponse(
                {
                    "data": data,
                    "has_more": False,
                    "first_id": ids[0] if ids else None,
                    "last_id": ids[-1] if ids else None,
                }
            )
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {"id": m, "object": "model", "created": now, "owned_by": "panto"} for m in ids
                ],
            }
        )

    async def liveliness(_: Request) -> Response:
        if state["draining"]:
            return JSONResponse({"status": "shutting down"}, 503)
        return JSONResponse({"status": "ok"})

    async def readiness(_: Request) -> Response:
        problem = await ledger.check()
        if problem is not None:
            return JSONResponse({"status": "unavailable", "database": problem}, 503)
        return JSONResponse({"status": "ok", "inflight": proxy.inflight})

    async def openapi(_: Request) -> Response:
        return JSONResponse(OPENAPI)

    hub: Any
    if (config.session_url or "").startswith(("postgresql://", "postgres://")):
        from .replicas import ReplicaHub  # sessions shared by every replica on it

        hub = ReplicaHub(config)
    else:
        hub = AgentHub(config)

    def owner_of(request: Request) -> str:
        key = authenticate(request.headers, settings)
        return key.name if key is not None else ""

    def agent_error(e: Exception) -> Response:
        if isinstance(e, AuthError):
            return JSONResponse(
                {"error": {"type": "authentication_error", "message": e.message}}, e.status
            )
        assert isinstance(e, HubError)
        return JSONResponse({"error": {"type": e.type, "message": e.message}}, e.status)

    async def json_body(request: Request) -> dict[str, Any]:
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError as e:
            raise HubError(400, f"request body is not JSON: {e}") from None
        if not isinstance(body, dict):
            raise HubError(400, "request body must be a JSON object")
        return body

    async def sessions_create(request: Request) -> Response:
        try:
            owner = owner_of(request)
            body = await json_body(request)
            timeout = body.get("approval_timeout", APPROVAL_TIMEOUT)
            if not isinstance(timeout, (int, float)) or not 0 < timeout <= 3600:
                raise HubError(400, "approval_timeout: expected seconds, 0 < x <= 3600")
            for key, what in (("model", "PROVIDER/MODEL"), ("cwd", "a directory's path")):
                if body.get(key) is not None and not isinstance(body[key], str):
                    raise HubError(400, f"{key}: expected a string ({what}), got {body[key]!r}")
            try:
                cwd = settings.session_cwd(body.get("cwd"))
            except ValueError as e:
                raise HubError(403, str(e), "permission_error") from None
            s = await hub.create(
                owner,
                body.get("model"),
                cwd,
                bool(body.get("approvals")),
                float(timeout),
            )
        except (AuthError, HubError) as e:
            return agent_error(e)
        return JSONResponse(await hub.describe(s), 201)

    async def sessions_list(request: Request) -> Response:
        try:
            owner = owner_of(request)
            return JSONResponse({"data": [await hub.describe(s) for s in await hub.list(owner)]})
        except (AuthError, HubError) as e:
            return agent_error(e)

    def one(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            try:
                s = await hub.get(request.path_params["id"], owner_of(request))
                return await handler(request, s)
            except (AuthError, HubError) as e:
                return agent_error(e)

        return endpoint

    async def session_get(_: Request, s: Any) -> Response:
        return JSONResponse(await hub.describe(s))

    async def session_messages(_: Request, s: Any) -> Response:
        return JSONResponse({"data": await hub.messages(s)})

    async def session_prompt(request: Request, s: Any) -> Response:
        body = await json_body(request)
        text = body.get("text")
        if not isinstance(text, str):
            got = "missing" if "text" not in body else f"got {text!r}"
            raise HubError(400, f'text: expected a string (the prompt), {got}: {{"text": "..."}}')
        out = await hub.prompt(s, text, str(body.get("mode", "follow_up")))
        return JSONResponse(out, 202)

    async def session_abort(_: Request, s: Any) -> Response:
        await hub.abort(s)
        return JSONResponse(await hub.describe(s))

    async def session_permission(request: Request, s: Any) -> Response:
        body = await json_body(request)
        await hub.answer(s, request.path_params["request"], str(body.get("decision", "")))
        return JSONResponse({"ok": True})

    async def session_fork(request: Request, s: Any) -> Response:
        f = await hub.fork(s, owner_of(request))
        return JSONResponse(await hub.describe(f), 201)

    async def session_events(request: Request, s: Any) -> Response:
        after_s = request.query_params.get("after") or request.headers.get("last-event-id") or "0"
        try:
            after = int(after_s)
        except ValueError:
            raise HubError(
                400, f"after / Last-Event-ID: expected an event id, got {after_s!r}"
            ) from None
        return StreamingResponse(
            hub.events(s, after, HEARTBEAT),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )

    routes = [
        Route("/v1/agent/sessions", sessions_create, methods=["POST"]),
        Route("/v1/agent/sessions", sessions_list, methods=["GET"]),
        Route("/v1/agent/sessions/{id}", one(session_get), methods=["GET"]),
        Route("/v1/agent/sessions/{id}/messages", one(session_messages), methods=["GET"]),
        Route("/v1/agent/sessions/{id}/prompts", one(session_prompt), methods=["POST"]),
        Route("/v1/agent/sessions/{id}/events", one(session_events), methods=["GET"]),
        Route("/v1/agent/sessions/{id}/abort", one(session_abort), methods=["POST"]),
        Route("/v1/agent/sessions/{id}/fork", one(session_fork), methods=["POST"]),
        Route(
            "/v1/agent/sessions/{id}/permissions/{request}",
            one(session_permission),
            methods=["POST"],
        ),
        Route("/v1/chat/completions", hot["/v1/chat/completions"], methods=["POST"]),
        Route("/v1/messages", hot["/v1/messages"], methods=["POST"]),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/health/liveliness", liveliness, methods=["GET"]),
        Route("/health/readiness", readiness, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
    import contextlib

    @contextlib.asynccontextmanager
    async def life(_app: Any) -> Any:
        await hub.start()
        try:
            yield
        finally:
            state["draining"] = True
            await hub.aclose()
            ledger.close()

    paths = {r.path for r in routes}

    async def no_route(request: Request, exc: Any) -> Response:
        """An unknown path or method, in the client's wire shape, with the
        likely fix: a base URL with or without its /v1 is the usual slip."""
        wire = ANTHROPIC if "anthropic-version" in request.headers else OPENAI
        path, method = request.url.path, request.method
        if getattr(exc, "status_code", 404) == 405:
            message = f"{method} {path}: this route does not take {method} (see GET /openapi.json)"
            return wire_error(wire, 405, message, "invalid_request_error")
        message = f"no route {method} {path}"
        if "/v1" + path in paths:
            message += f"; did you mean /v1{path}? (an OpenAI client's base_url ends in /v1)"
        elif path.startswith("/v1/v1/") and path[3:] in paths:
            message += f"; did you mean {path[3:]}? (an Anthropic client's base_url has no /v1)"
        else:
            message += " (the routes: GET /openapi.json)"
        return wire_error(wire, 404, message, "not_found_error")

    app = Starlette(routes=routes, lifespan=life, exception_handlers={404: no_route, 405: no_route})
    app.state.proxy = proxy
    app.state.settings = settings
    app.state.serve = state
    app.state.end_event_streams = hub.end_event_streams
    return ServeApp(app, hot)


class ServeApp:
    """The ASGI app: a POST to a proxy route goes straight to its
    ``ProxyEndpoint``; everything else (and the other methods of those
    routes: 405) to Starlette.  Starlette's routing, middleware and
    streaming response (a task group per request, a wrapper per write) were
    a tenth of the proxy's CPU in a profile at 200 streams."""

    def __init__(self, app: Any, hot: dict[str, ProxyEndpoint]) -> None:
        self.app = app
        self.state = app.state
        self._hot = hot

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            endpoint = self._hot.get(scope["path"])
            if endpoint is not None:
                await endpoint(scope, receive, send)
                return
        await self.app(scope, receive, send)


class ProxyEndpoint:
    """``POST /v1/chat/completions`` or ``/v1/messages`` as a plain ASGI
    app: one ``send`` per upstream read, and a task watching for the client
    to go away (it cancels the relay, which closes the upstream request)."""

    def __init__(self, proxy: Proxy, settings: ServeSettings, wire: str) -> None:
        self.proxy = proxy
        self.settings = settings
        self.wire = wire

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        wire = self.wire
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            key = authenticate(headers, self.settings)
        except AuthError as e:
            await _respond(send, e.status, {}, error_body(wire, e.status, e.message, None))
            return
        parts = []
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                return  # the client went away
            parts.append(msg.get("body", b""))
            if not msg.get("more_body"):
                break
        try:
            status, out, body = await self.proxy.handle(wire, b"".join(parts), headers, key)
        except ProxyError as e:
            s, h, b = error_response(wire, e)
            await _respond(send, s, h, b)
            return
        if isinstance(body, bytes):
            await _respond(send, status, out, body)
            return
        await _stream(send, receive, status, out, body)


def _head(status: int, headers: Mapping[str, str]) -> dict[str, Any]:
    return {
        "type": "http.response.start",
        "status": status,
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
    }


async def _respond(send: Any, status: int, headers: Mapping[str, str], body: bytes) -> None:
    h = {"content-type": "application/json", **headers, "content-length": str(len(body))}
    await send(_head(status, h))
    await send({"type": "http.response.body", "body": body})


async def _stream(
    send: Any, receive: Any, status: int, headers: Mapping[str, str], body: Any
) -> None:
    """Send ``body`` (an async iterator of bytes), one write per item,
    until it ends or the client disconnects (then it is closed at once)."""
    import asyncio

    task = asyncio.current_task()
    state = {"done": False, "gone": False}

    async def watch() -> None:
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                break
        if not state["done"] and task is not None:
            state["gone"] = True
            task.cancel()

    watcher = asyncio.ensure_future(watch())
    try:
        await send(_head(status, headers))
        async for data in body:
            await send({"type": "http.response.body", "body": data, "more_body": True})
        state["done"] = True
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except asyncio.CancelledError:
        if not state["gone"]:
            raise
        if task is not None and hasattr(task, "uncancel"):
            task.uncancel()  # (3.11+) the cancel was ours: the client left
    finally:
        state["done"] = True
        watcher.cancel()
        await body.aclose()


async def _count_tokens(proxy: Proxy, raw: bytes, key: ApiKey | None) -> Any:
    """Anthropic's ``count_tokens``: passed through to an Anthropic
    upstream; otherwise estimated (about 4 characters a token, never 0 for
    a request with content)."""
    from starlette.responses import JSONResponse, Response

    try:
        body = json.loads(raw or b"null")
    except ValueError as e:
        raise ProxyError(400, f"request body is not JSON: {e}", "invalid_request_error") from None
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        raise ProxyError(400, "body.model: expected a string", "invalid_request_error")
    model = body["model"]
    if key is not None and not key.allows(model):
        raise ProxyError(403, f"this key may not use model {model!r}", "permission_error")
    target = proxy.target(proxy.chain(model)[0])
    if target.wire == ANTHROPIC:
        from ..providers import transport as tp

        up = {**body, "model": target.config.model}
        url = target.provider.url.rsplit("/messages", 1)[0] + "/messages/count_tokens"
        cfg = proxy.config
        try:
            resp = await tp.asend(
                proxy.client(target.provider.base_url),
                url,
                json.dumps(up).encode(),
                target.provider.headers(),
                connect=cfg.connect_timeout,
                read=cfg.read_timeout,
                first_byte=None,
            )
            try:
                content = await tp.aread_error_body(resp, 1 << 20)
            finally:
                await resp.aclose()
        except tp.errors() as e:
            msg = tp.redact(
                f"upstream {target.spec}: {type(e).__name__}: {e}", target.provider.secrets
            )
            raise ProxyError(502, msg, "api_error") from None
        return Response(content, resp.status_code, media_type="application/json")
    text = json.dumps(
        {k: body.get(k) for k in ("system", "messages", "tools") if k in body}, ensure_ascii=False
    )
    return JSONResponse({"input_tokens": max(1, len(text) // 4)})


#: Seconds between comment lines on an idle event stream.
HEARTBEAT = 15.0


def _op(summary: str, tag: str) -> dict[str, Any]:
    return {"summary": summary, "tags": [tag], "responses": {"200": {"description": "OK"}}}


#: The OpenAPI 3.1 document of every route.
OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "panto serve", "version": "1"},
    "components": {
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer"},
            "apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"},
        }
    },
    "security": [{"bearer": []}, {"apiKey": []}],
    "paths": {
        "/v1/chat/completions": {"post": _op("OpenAI chat completions (streamed or not)", "proxy")},
        "/v1/messages": {"post": _op("Anthropic messages (streamed or not)", "proxy")},
        "/v1/messages/count_tokens": {"post": _op("Anthropic token count", "proxy")},
        "/v1/models": {
            "get": _op("models; Anthropic's shape with an anthropic-version header", "proxy")
        },
        "/health/liveliness": {"get": _op("the process is up", "health")},
        "/health/readiness": {"get": _op("ready: the session database answers", "health")},
        "/openapi.json": {"get": _op("this document", "meta")},
        "/v1/agent/sessions": {
            "post": _op("create an agent session: {model, cwd} -> {id}", "agent"),
            "get": _op("this key's agent sessions", "agent"),
        },
        "/v1/agent/sessions/{id}": {"get": _op("one session's state", "agent")},
        "/v1/agent/sessions/{id}/messages": {"get": _op("the conversation as JSON", "agent")},
        "/v1/agent/sessions/{id}/prompts": {
            "post": _op(
                "a prompt: {text, mode: reject|steer|follow_up}; 409 when busy and reject", "agent"
            )
        },
        "/v1/agent/sessions/{id}/events": {
            "get": _op(
                "the session's events (SSE with id:; Last-Event-ID or ?after= replays)", "agent"
            )
        },
        "/v1/agent/sessions/{id}/abort": {"post": _op("cancel the running turn", "agent")},
        "/v1/agent/sessions/{id}/fork": {
            "post": _op("a new session with a copy of this one", "agent")
        },
    },
}

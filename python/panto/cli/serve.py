"""``panto serve``: panto as an OpenAI- and Anthropic-compatible server
(docs/serve.md).  Prints ``panto serve: listening on http://HOST:PORT``
once it accepts connections; SIGTERM or Ctrl-C drains the streams in
flight (up to ``[serve] drain_timeout``) and exits."""

from __future__ import annotations

import argparse
import asyncio
import errno
import os
import socket
import sys
from collections.abc import Sequence
from typing import Any

from .common import load_config, usage_error

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="panto serve",
        description="Serve /v1/chat/completions and /v1/messages in front of panto's "
        "configured providers (either wire to either wire), plus /v1/models, "
        "/v1/messages/count_tokens and health routes; /v1/agent/sessions runs the coding "
        "agent itself.",
        epilog="A request's model is PROVIDER/MODEL (GET /v1/models lists them) or a "
        "[serve.models.NAME] alias; upstream keys come from panto's provider config and "
        "environment (ANTHROPIC_API_KEY, OPENAI_API_KEY). With no client keys "
        "([serve.keys.NAME] or PANTO_SERVE_KEYS) it binds loopback only and accepts any key. "
        "The first line printed is the address; SIGTERM or Ctrl-C lets streams in flight "
        "finish (up to [serve] drain_timeout). Try it offline with model mock/anthropic. "
        "See docs/serve.md.",
    )
    p.add_argument("--host", help="address to bind (default [serve] host: 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default [serve] port: 8765; 0 takes a free one)")
    p.add_argument(
        "--hash-key",
        action="store_true",
        help="read a key on stdin and print the sha256 for [serve.keys.NAME]",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.hash_key:
        from ..serve.settings import hash_key

        if sys.stdin.isatty():  # typed: not echoed to the screen (and its scrollback)
            import getpass

            try:
                key = getpass.getpass("key (not shown): ").strip()
            except (EOFError, KeyboardInterrupt):
                key = ""
        else:
            key = sys.stdin.readline().strip()
        if not key:
            usage_error(
                "--hash-key: no key on stdin (panto serve --hash-key < key.txt)", "panto serve"
            )
        print(hash_key(key))
        return 0
    config = load_config("panto serve")
    url = config.session_url
    if url and (
        not url.startswith(("postgresql://", "postgres://", "sqlite:"))
        or (url.startswith("sqlite://") and not url.startswith("sqlite:///"))
    ):
        # what panto -p refuses at start: here it started, said it was
        # ready, and failed every agent session (the ledger fell back to JSONL)
        from ..sessions.backends import SessionURLError, open_backend

        try:
            open_backend(config)
        except SessionURLError as e:
            usage_error(str(e), "panto serve")
    from ..errors import ConfigError
    from ..serve.settings import ServeSettings, is_loopback

    try:
        settings = ServeSettings.from_config(config.data.get("serve") or {})
    except ConfigError as e:
        usage_error(str(e), "panto serve")
    import dataclasses

    if args.host:
        settings = dataclasses.replace(settings, host=args.host)
    if args.port is not None:
        if not 0 <= args.port <= 65535:
            usage_error(f"--port {args.port}: expected 0-65535", "panto serve")
        settings = dataclasses.replace(settings, port=args.port)
    if not settings.keys and not is_loopback(settings.host):
        usage_error(
            f"refusing to listen on {settings.host} without keys: anyone who can reach it "
            "could use your providers. Set [serve.keys.NAME] sha256 (panto serve --hash-key) "
            "or PANTO_SERVE_KEYS, or bind 127.0.0.1",
            "panto serve",
        )
    for line in _alias_problems(config, settings):
        print(f"panto serve: warning: {line}", file=sys.stderr)
    sock = _listen(settings.host, settings.port)
    try:
        return _run(_serve(config, settings, sock))
    except KeyboardInterrupt:
        return 130


def _alias_problems(config: Any, settings: Any) -> list[str]:
    """A line for each alias target or fallback that names no configured
    provider: said at start, not only to the client whose request reaches
    it (a warning, not a refusal: a Lua extension may register it)."""
    known = sorted(config.providers)
    out = []
    for alias in settings.aliases.values():
        for spec in (alias.target, *alias.fallbacks):
            provider = spec.split("/", 1)[0]  # (a bare name: that provider's default model)
            if provider in config.providers:
                continue
            out.append(
                f"[serve.models.{alias.name}] {spec!r}: no provider {provider!r} is configured "
                f"(providers: {', '.join(known)}); "
                f"requests for {alias.name!r} that reach it fail until it is (or an extension "
                "registers it)"
            )
    return out


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here rather than by uvicorn so that a
    port in use or a host that is not this machine's is one line saying
    what to do (uvicorn logs it and exits from inside the event loop, which
    ends in a traceback)."""
    where = f"{host}:{port}"
    try:
        family, _, _, _, addr = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        return socket.create_server(addr, family=family, backlog=2048)
    except socket.gaierror as e:
        usage_error(
            f"cannot listen on host {host!r}: {e.strerror}; set --host "
            "(or [serve] host) to an address of this machine, such as 127.0.0.1",
            "panto serve",
        )
    except OSError as e:
        fix = {
            errno.EADDRINUSE: "another process listens there: stop it, "
            "or choose another port (--port 0 takes a free one)",
            errno.EACCES: "ports below 1024 need privileges: choose a port above 1024",
            errno.EADDRNOTAVAIL: "not an address of this machine: bind 127.0.0.1 "
            "or one of this machine's addresses",
        }.get(e.errno or 0, "check --host and --port (or [serve] host and port)")
        why = os.strerror(e.errno) if e.errno else str(e)
        print(f"panto serve: cannot listen on {where}: {why}; {fix}", file=sys.stderr)
        raise SystemExit(1) from None


def _run(main: Any) -> int:
    """``asyncio.run(main)``, on uvloop when it is installed (the
    ``panto[uvloop]`` extra): its loop costs less per socket event, and a
    proxy at 200 streams is thousands of socket events a second."""
    try:
        import uvloop
    except ImportError:
        return int(asyncio.run(main))
    return int(uvloop.run(main))


async def _serve(config: object, settings: object, sock: socket.socket) -> int:
    import uvicorn

    from ..serve.app import build_app
    from ..serve.settings import ServeSettings

    assert isinstance(settings, ServeSettings)
    app = build_app(config, settings)  # type: ignore[arg-type]
    uc = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=int(settings.drain_timeout),
        lifespan="on",
    )

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # before uvicorn waits for the connections: the agent event
            # streams, which never end by themselves, end once idle
            await app.state.end_event_streams()
            await super().shutdown(sockets)

    server = Server(uc)
    task = asyncio.ensure_future(_serve_until_stopped(server, sock))
    while not server.started and not task.done():
        await asyncio.sleep(0.02)
    if task.done():
        task.result()
        print("panto serve: could not start (see above)", file=sys.stderr)
        return 1
    from ..app import settle_after_startup

    settle_after_startup()
    bound = server.servers[0].sockets[0].getsockname()
    host = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
    print(f"panto serve: listening on http://{host}:{bound[1]}", flush=True)
    await task
    return 0


async def _serve_until_stopped(server: Any, sock: socket.socket) -> None:
    """``server.serve`` on ``sock``; uvicorn's ``sys.exit`` when its start-up
    fails (it has logged why) becomes a return, not a SystemExit escaping
    the event loop with a traceback."""
    try:
        await server.serve(sockets=[sock])
    except SystemExit:
        pass

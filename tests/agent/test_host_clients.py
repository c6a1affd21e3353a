"""The Host's shared async HTTP clients (issue 24, step 6): the sessions of
one host reuse one pool per upstream origin across turns and sessions
(one kept-alive connection serves turn after turn), per event loop; a
host's clients are its own and close with it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from panto.agent import Agent
from panto.app import Host
from panto.config import Config
from panto.conversation import Text
from panto.errors import PantoError, ProviderError
from panto.providers import ahttp11
from panto.providers.clients import AsyncClients, default_async_clients
from panto.testing import Reply, ScriptedServer


def config(server: ScriptedServer) -> Config:
    return Config(
        provider="openai", model="m", base_url=server.base_url("openai-chat"), api_key="k"
    )


def test_sessions_of_a_host_share_one_kept_alive_connection(tmp_path: Path) -> None:
    host = Host()
    with ScriptedServer() as server:
        for _ in range(6):
            server.push(Reply([Text("ok")]))

        async def main() -> None:
            agents = [
                host.open_agent(config(server), cwd=tmp_path, extensions=False) for _ in range(3)
            ]
            for agent in agents:
                assert agent.http_clients is host.http_clients
            for _ in range(2):
                for agent in agents:  # one after another: one connection is enough
                    agent.submit_user_message("hi")
                    async for _ev in agent.run_async():
                        pass
                    assert agent.conversation[-1].text == "ok"
            for agent in agents:
                await agent.aclose()
                agent.store.close()

        asyncio.run(main())
        assert len(server.requests) == 6
        assert len({r.client for r in server.requests}) == 1
    assert host.http_clients.count() == 1
    host.close()
    assert host.http_clients.count() == 0 and host.http_clients.closed


def test_clients_per_loop_origin_and_tls_and_closed_loops_dropped() -> None:
    clients = AsyncClients(7)

    async def main() -> tuple[object, object]:
        a = clients.get("http://127.0.0.1:1/v1/chat")
        assert isinstance(a, ahttp11.AsyncClient) and a.max_connections == 7
        assert clients.get("http://127.0.0.1:1/v1/other") is a
        assert clients.get("http://127.0.0.1:2/v1") is not a
        assert clients.get("https://127.0.0.1:1/v1") is not a
        return a, clients.get("http://127.0.0.1:1/v1")

    a, same = asyncio.run(main())
    assert a is same and clients.count() == 3
    b, _ = asyncio.run(main())  # a new loop: new clients; the closed loop's are dropped
    assert b is not a and a.is_closed and clients.count() == 3
    clients.close()
    assert b.is_closed  # type: ignore[attr-defined]


def test_an_agent_without_a_host_uses_the_process_clients() -> None:
    from panto.agent import Agent

    agent = Agent(Config(provider="openai", model="m", base_url="http://127.0.0.1:1/v1"))
    assert agent.http_clients is None

    async def main() -> object:
        return agent._async_http_client()  # noqa: SLF001

    client = asyncio.run(main())
    assert isinstance(client, ahttp11.AsyncClient)
    assert default_async_clients().count() >= 1


def test_an_agent_of_a_closed_host_fails_its_async_turn_with_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from panto import app
    from panto.tools import default_tool_pool

    host = Host()
    monkeypatch.setattr(app, "_default", host)  # (the process's own host is left alone)
    with ScriptedServer() as server:
        server.push(Reply([Text("sync ok")]))
        agent = host.open_agent(config(server), cwd=tmp_path, extensions=False, session=None)
        host.close()
        agent.submit_user_message("hi")

        async def main() -> None:
            async for _ev in agent.run_async():
                pass

        with pytest.raises(ProviderError) as info:
            asyncio.run(main())
        err = info.value
        assert err.type == "host_closed" and not err.retryable
        assert "Host.close()" in str(err) and "open Host" in str(err)
        assert server.requests == []
        # the sync path runs on the agent's own client, not the host's
        agent.submit_user_message("hi")
        with agent.run() as stream:
            for _ev in stream:
                pass
        assert agent.conversation[-1].text == "sync ok"
        with pytest.raises(PantoError, match="this Host is closed"):
            host.open_agent(config(server), cwd=tmp_path, extensions=False, session=None)
    # what is the process's stays open: the default host is made anew, the
    # tool pool a host without tool_threads used is still the process's
    assert app.default_host() is not host and not app.default_host().closed
    assert default_tool_pool().submit(lambda: 7).result() == 7
    assert not default_async_clients().closed


def test_the_proxy_environment_is_read_at_a_urls_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """As httpx reads it when a client is made: a turn's start does not read
    the environment again (it cost a tenth of a turn's start on the loop)."""
    from panto.providers.transport import PROXY_VARS

    for v in PROXY_VARS:
        monkeypatch.delenv(v, raising=False)
        monkeypatch.delenv(v.upper(), raising=False)
    clients = AsyncClients()

    async def main() -> tuple[object, object, object]:
        a = clients.get("http://127.0.0.1:1/v1")
        monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
        again = clients.get("http://127.0.0.1:1/v1")
        other = clients.get("http://127.0.0.1:1/v2")  # first use: with the proxy
        return a, again, other

    a, again, other = asyncio.run(main())
    clients.close()
    assert isinstance(a, ahttp11.AsyncClient) and again is a
    assert not isinstance(other, ahttp11.AsyncClient)  # httpx's, which speaks to proxies


def test_agent_aclose_closes_a_stream_the_caller_broke_out_of() -> None:
    """``break`` out of ``async for ev in agent.run_async()`` leaves the
    stream suspended, and its generator is in a reference cycle: its
    connection stayed busy until a full garbage collection.  ``aclose()``
    of the agent closes it now."""
    import gc

    clients = AsyncClients(4)
    with ScriptedServer() as server:
        server.push(Reply([Text("tok " * 50)], chunk=4, delay=0.02))

        async def main() -> tuple[int, int]:
            agent = Agent(config(server))
            agent.http_clients = clients
            agent.submit_user_message("hi")
            async for _ev in agent.run_async():
                break  # the stream is neither finished nor closed
            pool = next(iter(clients.get(server.base_url("openai-chat"))._pools.values()))
            busy = pool.open - len(pool.idle)
            await agent.aclose()
            return busy, pool.open - len(pool.idle)

        gc.disable()  # the collector must not be what closes it
        try:
            busy_before, busy_after = asyncio.run(main())
        finally:
            gc.enable()
    clients.close()
    assert (busy_before, busy_after) == (1, 0)

"""While a proxied stream waits for the upstream's next read, the proxy
keeps none of the last one: the decoder has its copy, and the relay (same
wire: the upstream's bytes; cross-wire: the encoded events) and the
collector (a non-streaming request) drop theirs before the next read.
Hundreds of streams wait at once on a busy server, each with its last read."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest

from panto.config import Config
from panto.conversation import Text
from panto.serve.proxy import Proxy
from panto.serve.settings import ServeSettings
from panto.testing import Reply, ScriptedServer, render_sse

BIG = "x" * 50_000  # one delta: with the events around it, one read's worth
#: what the proxy holds: the upstream in this process renders its events
#: with the codec (its allocations are not the proxy's)
SERVER_SIDE = [
    tracemalloc.Filter(False, "*/panto/testing.py"),
    tracemalloc.Filter(False, "*/panto/providers/codec_*.py"),
]


def _proxy_bytes() -> int:
    snap = tracemalloc.take_snapshot().filter_traces(SERVER_SIDE)
    return sum(t.size for t in snap.traces)


@contextmanager
def _stalling_proxy(upstream: str) -> Iterator[tuple[Proxy, str]]:
    """A proxy, and the model to ask it for, in front of an upstream that
    answers "warm", then the big delta and a 1 s stall after it (then drops
    the connection)."""
    reply = Reply([Text(BIG)], chunk=len(BIG))
    delta = next(i for i, e in enumerate(render_sse(reply, upstream)) if len(e) > len(BIG))
    with ScriptedServer() as up:
        up.push(Reply([Text("warm")]), replace(reply, stall_after=delta + 1, stall=1.0))
        provider = "openai" if upstream == "openai-chat" else "anthropic"
        cfg = Config(provider=provider, model="m", base_url=up.base_url(upstream), api_key="k")
        yield Proxy(cfg, ServeSettings()), f"{provider}/m"


@pytest.mark.parametrize(
    ("upstream", "client"),
    [("openai-chat", "openai-chat"), ("anthropic-messages", "openai-chat")],
    ids=["same-wire", "cross-wire"],
)
def test_a_relayed_stream_waiting_for_its_next_read_holds_none_of_its_last_one(
    upstream: str, client: str
) -> None:
    held: list[int] = []
    with _stalling_proxy(upstream) as (proxy, model):
        messages = [{"role": "user", "content": "x"}]
        body = json.dumps({"model": model, "stream": True, "messages": messages}).encode()

        async def main() -> int:
            _, _, stream = await proxy.handle(client, body, {}, None)
            assert not isinstance(stream, bytes)
            async for _ in stream:  # the warm-up: what a first request imports
                pass
            tracemalloc.start()
            try:
                base = _proxy_bytes()

                async def sample() -> None:
                    await asyncio.sleep(0.5)  # the relay waits for the next read
                    gc.collect()
                    held.append(_proxy_bytes() - base)

                _, _, stream = await proxy.handle(client, body, {}, None)
                assert not isinstance(stream, bytes)
                sampler: asyncio.Future[None] | None = None
                got = 0
                async for piece in stream:  # (ends with an in-band error: the cut)
                    got += len(piece)
                    del piece  # (the test keeps nothing either)
                    if got > len(BIG) and sampler is None:
                        sampler = asyncio.ensure_future(sample())
                assert sampler is not None
                await sampler
                return got
            finally:
                tracemalloc.stop()

        got = asyncio.run(main())
    assert got > len(BIG)
    # without the drops: the read's bytes and what was made of them, 2-3 x
    # the delta; now well under one
    assert held[0] < len(BIG) * 0.5, held


def test_a_collected_reply_waiting_for_its_next_read_holds_none_of_its_last_one() -> None:
    """A request without ``stream``: the proxy decodes the whole reply
    before answering; between reads it keeps the decoder's copy only."""
    from panto.serve.proxy import ProxyError

    with _stalling_proxy("openai-chat") as (proxy, model):
        body = json.dumps({"model": model, "messages": [{"role": "user", "content": "x"}]})

        async def main() -> int:
            status, _, _ = await proxy.handle("openai-chat", body.encode(), {}, None)  # warm-up
            assert status == 200
            tracemalloc.start()
            try:
                base = _proxy_bytes()
                task = asyncio.ensure_future(proxy.handle("openai-chat", body.encode(), {}, None))
                await asyncio.sleep(0.5)  # the big read is in; the next one waits
                gc.collect()
                held = _proxy_bytes() - base
                # the stall ends with a cut: a 502 naming it (it was the
                # transport's own exception, out of Proxy.handle)
                with pytest.raises(ProxyError, match="upstream openai/m: RemoteProtocolError") as e:
                    await task
                assert e.value.status == 502
                return held
            finally:
                tracemalloc.stop()

        held = asyncio.run(main())
    assert held < len(BIG) * 0.5, held

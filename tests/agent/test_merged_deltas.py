"""The turn decodes with merged deltas (issue 23, item 17): the text deltas
of one block that arrive in one read are one ContentDelta; the text, its
order, the message and the async driver are unchanged.  The public
StreamDecoder keeps one event per delta by default."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from panto import StreamDecoder
from panto.agent import Agent
from panto.conversation import Text, Thinking
from panto.events import ContentDelta, MessageComplete
from panto.testing import Reply, ScriptedServer

TEXT = "".join(f"word{i} " for i in range(400))  # 2,690 characters: 337 deltas of 8


def _reply() -> Reply:
    # every event in one write: the client reads them together
    return Reply([Thinking("hmm " * 50, "sig"), Text(TEXT)], chunk=8, events_per_write=10_000)


def test_one_read_of_deltas_is_one_event(
    server: ScriptedServer, make_agent: Callable[..., Agent]
) -> None:
    server.push(_reply(), _reply())
    agent = make_agent()
    agent.submit_user_message("hi")
    with agent.run() as stream:
        events = list(stream)
    deltas = [e for e in events if type(e) is ContentDelta]
    [final] = [e for e in events if type(e) is MessageComplete and e.final]
    text = "".join(e.text for e in deltas if e.kind == "text")
    assert text == TEXT == final.message.text
    assert "".join(e.text for e in deltas if e.kind == "thinking") == "hmm " * 50
    assert len(deltas) <= 6, len(deltas)  # one per block per read, not 337 + 25

    async def run_async() -> list[ContentDelta]:
        agent.submit_user_message("again")
        out = []
        async with agent.run_async() as s:
            async for e in s:
                if type(e) is ContentDelta:
                    out.append(e)
        return out

    adeltas = asyncio.run(run_async())
    assert "".join(e.text for e in adeltas if e.kind == "text") == TEXT
    assert len(adeltas) <= 6, len(adeltas)


def test_the_public_decoder_keeps_one_event_per_delta(server: ScriptedServer, wire: str) -> None:
    import urllib.request

    server.push(_reply())
    path = "/v1/messages" if wire == "anthropic-messages" else "/v1/chat/completions"
    req = urllib.request.Request(
        server.url.rstrip("/") + path, data=b'{"stream": true}', method="POST"
    )
    body = urllib.request.urlopen(req, timeout=30).read()
    dec = StreamDecoder(wire)
    dec.feed(body)
    dec.close()
    deltas = [e for e in dec if type(e) is ContentDelta and e.kind == "text"]
    assert len(deltas) == len(TEXT) // 8 + 1
    assert "".join(e.text for e in deltas) == TEXT

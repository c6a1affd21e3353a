"""Tool-result images in a session: stored in the entry (base64, the
``Message.to_dict`` shape), loaded back equal on every backend, and re-sent
on resume exactly as the original agent sent them."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import pytest
from support.sessions import agent_stack

from panto.conversation import Image, Message, Text, ToolResultBlock, ToolUse
from panto.providers import make_provider
from panto.tools import ToolCall, ToolDecl, ToolOutput, ToolSource

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 40).decode()
GIF = base64.b64encode(b"GIF89a" + b"\0" * 20).decode()


class Shots(ToolSource):
    """A tool returning images, like std.read on an image file."""

    name = "shots"

    def decls(self) -> Sequence[ToolDecl]:
        return [ToolDecl("screenshot", "Take a screenshot")]

    def invoke_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput]:
        return [
            ToolOutput("two shots", False, (Image("image/png", PNG), Image("image/gif", GIF)))
            for _ in calls
        ]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_tool_result_images_survive_a_resume(backend: Any, workdir: str, provider: str) -> None:
    agent_cls, config_cls, reply, server_cls = agent_stack()
    wire = "anthropic-messages" if provider == "anthropic" else "openai-chat"
    script = [
        reply([Text("Taking one."), ToolUse("toolu_1", "screenshot", {})]),
        reply([Text("I see two shots.")]),
    ]
    with server_cls([*script, reply([Text("ok")]), reply([Text("ok")])]) as server:
        config = config_cls(
            provider=provider,
            model="test-model",
            base_url=server.base_url(wire),
            api_key="k",
            max_retries=0,
            cache_enabled=False,
        )
        store = backend.backend.create(workdir)
        sid = store.session_id
        with agent_cls(config, store=store) as agent:
            agent.register_tool_source(Shots())
            agent.submit_user_message("take a screenshot")
            with agent.run() as stream:
                list(stream)
            original = list(agent.conversation)
        store.close()
        tool_msg = original[2]
        assert tool_msg.content == (
            ToolResultBlock(
                "toolu_1", "two shots", False, (Image("image/png", PNG), Image("image/gif", GIF))
            ),
        )

        # stored in the entry, in the to_dict shape
        entries = [e for e in backend.backend.export(sid) if e.get("type") == "message"]
        stored = [e["message"] for e in entries if e["message"]["role"] == "tool"]
        assert stored == [tool_msg.to_dict()]
        assert stored[0]["content"][0]["images"] == [
            {"type": "image", "media_type": "image/png", "data": PNG},
            {"type": "image", "media_type": "image/gif", "data": GIF},
        ]

        # loaded back equal, and the resumed agent re-sends the images
        loaded = backend.backend.read(sid)
        assert list(loaded.conversation) == original
        with backend.backend.open(sid) as store2:
            with agent_cls(config, store=store2, conversation=loaded.conversation) as agent2:
                agent2.register_tool_source(Shots())
                agent2.submit_user_message("and now?")
                with agent2.run() as stream:
                    list(stream)
        sent = server.requests[-1]
        expected = make_provider(config).build_request(
            [*original, Message.user("and now?")], Shots().decls()
        )
        assert sent.body == expected.body
        body = json.loads(sent.body)
        if provider == "anthropic":
            result = body["messages"][2]["content"][0]
            assert result["tool_use_id"] == "toolu_1"
            assert [p["type"] for p in result["content"]] == ["text", "image", "image"]
            assert result["content"][2]["source"]["data"] == GIF
        else:
            roles = [m["role"] for m in body["messages"]]
            assert roles == ["user", "assistant", "tool", "user", "assistant", "user"]
            urls = [p["image_url"]["url"] for p in body["messages"][3]["content"][1:]]
            assert urls == [f"data:image/png;base64,{PNG}", f"data:image/gif;base64,{GIF}"]

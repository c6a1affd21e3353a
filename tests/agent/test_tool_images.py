"""Images in tool results, end to end: the std ``read`` tool on a PNG, the
next request on both wires (exact JSON shape), the events and the terminal
output (a marker, never base64), the token estimate."""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from support.agent import PROVIDER, WIRES

from panto.agent.compaction import estimate_tokens, transcript
from panto.app import open_agent
from panto.config import Config
from panto.conversation import Image, Message, Text, ToolResultBlock, ToolUse
from panto.events import ToolResult, event_to_dict
from panto.images import IMAGE_TOKENS_MAX, image_marker, image_tokens
from panto.providers.openai_chat import TOOL_IMAGES_HEADER, TOOL_IMAGES_NOTE
from panto.testing import Reply, ScriptedServer


def png(w: int = 1, h: int = 1) -> bytes:
    """A valid w x h grey PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        c = kind + data
        return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c))

    raw = b"".join(b"\x00" + b"\x80" * w for _ in range(h))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def _run_read(tmp_path: Path, wire: str, *paths: str) -> tuple[list[Any], dict[str, Any], Any]:
    """One turn: the model calls ``read`` on each path, then answers.
    Returns the events, the second request's body and the agent's
    conversation."""
    calls = [ToolUse(f"toolu_{i}", "read", {"path": p}) for i, p in enumerate(paths)]
    with ScriptedServer() as server:
        server.push(Reply([Text("Looking."), *calls]), Reply([Text("A grey pixel.")]))
        config = Config(
            provider=PROVIDER[wire],
            model="test-model",
            base_url=server.base_url(wire),
            api_key="k",
            max_retries=0,
            cache_enabled=False,  # exact bodies
        )
        agent = open_agent(
            config, cwd=tmp_path, session=None, extensions="builtin", system_prompt=""
        )
        try:
            agent.submit_user_message("what is in shot.png?")
            with agent.run() as stream:
                events = list(stream)
            conversation = list(agent.conversation)
        finally:
            agent.close()
        assert len(server.requests) == 2
        return events, server.requests[1].json, conversation


@pytest.mark.parametrize("wire", WIRES)
def test_read_on_a_png_sends_the_image_with_the_result(tmp_path: Path, wire: str) -> None:
    data = png()
    (tmp_path / "shot.png").write_bytes(data)
    b64 = base64.b64encode(data).decode()
    events, body, conversation = _run_read(tmp_path, wire, "shot.png")
    text = f"Image file shot.png (image/png, {len(data)} bytes), attached."

    # the event and the conversation carry the image
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert (result.content, result.is_error) == (text, False)
    assert result.images == (Image("image/png", b64),)
    tool_msg = conversation[-2]
    assert tool_msg.role == "tool"
    assert tool_msg.content == (
        ToolResultBlock("toolu_0", text, False, (Image("image/png", b64),)),
    )

    msgs = body["messages"]
    if wire == "anthropic-messages":
        assert msgs[-1] == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_0",
                    "content": [
                        {"type": "text", "text": text},
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": b64},
                        },
                    ],
                    "is_error": False,
                }
            ],
        }
    else:
        assert msgs[-2:] == [
            {
                "role": "tool",
                "tool_call_id": "toolu_0",
                "content": text + "\n" + TOOL_IMAGES_NOTE.format(n=1),
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": TOOL_IMAGES_HEADER.format(id="toolu_0")},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}},
                ],
            },
        ]
        assert msgs[-3]["role"] == "assistant" and msgs[-3]["tool_calls"][0]["id"] == "toolu_0"


@pytest.mark.parametrize("wire", WIRES)
def test_a_name_that_lies_is_read_by_content(tmp_path: Path, wire: str) -> None:
    """A Git LFS pointer named .png is text; a PNG named .jpg is image/png
    (the API rejects an image whose media type does not match)."""
    (tmp_path / "lfs.png").write_text("version https://git-lfs.github.com/spec/v1\nsize 12\n")
    data = png(2, 2)
    (tmp_path / "real.jpg").write_bytes(data)
    events, body, _ = _run_read(tmp_path, wire, "lfs.png", "real.jpg")
    lfs, real = [e for e in events if isinstance(e, ToolResult)]
    assert lfs.images == () and "git-lfs" in lfs.content and not lfs.is_error
    assert real.images == (Image("image/png", base64.b64encode(data).decode()),)
    raw = json.dumps(body)
    assert raw.count(base64.b64encode(data).decode()) == 1 and "image/jpeg" not in raw


def test_tool_results_with_images_on_both_wires_keep_the_calls_answered_first() -> None:
    """Two calls, both with images, then a user prompt: OpenAI gets every
    tool message right after the calls, then one user message with the
    images, then the prompt; Anthropic the list form in each tool_result."""
    from panto.providers import anthropic, openai_chat

    a, b = Image("image/png", "QUFB"), Image("image/gif", "R0lG")
    msgs = [
        Message.user("look"),
        Message("assistant", (ToolUse("c1", "read", {}), ToolUse("c2", "read", {}))),
        Message(
            "tool",
            (ToolResultBlock("c1", "", False, (a,)), ToolResultBlock("c2", "two", True, (a, b))),
        ),
        Message.user("and?"),
    ]
    url = "data:{};base64,{}".format
    assert openai_chat.serialize_messages(msgs)[1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "read", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": TOOL_IMAGES_NOTE.format(n=1)},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": "Error: two\n" + TOOL_IMAGES_NOTE.format(n=2),
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": TOOL_IMAGES_HEADER.format(id="c1")},
                {"type": "image_url", "image_url": {"url": url("image/png", "QUFB")}},
                {"type": "text", "text": TOOL_IMAGES_HEADER.format(id="c2")},
                {"type": "image_url", "image_url": {"url": url("image/png", "QUFB")}},
                {"type": "image_url", "image_url": {"url": url("image/gif", "R0lG")}},
            ],
        },
        {"role": "user", "content": "and?"},
    ]

    def img(i: Image) -> dict[str, Any]:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": i.media_type, "data": i.data_b64},
        }

    # the empty text is left out (the API rejects empty text blocks)
    assert anthropic.serialize_messages(msgs)[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": [img(a)], "is_error": False},
            {
                "type": "tool_result",
                "tool_use_id": "c2",
                "content": [{"type": "text", "text": "two"}, img(a), img(b)],
                "is_error": True,
            },
            {"type": "text", "text": "and?"},
        ],
    }


def test_the_mock_recognises_the_tool_images_message() -> None:
    """The user message the OpenAI wire sends after tool messages for their
    images (TOOL_IMAGES_HEADER) is the results' part, not a prompt: the mock
    summarises the results (the codec's parser puts the images back)."""
    from panto.providers import openai_chat
    from panto.testing import RecordedRequest, echo_responder

    msgs = [
        Message.user("call read a.png"),
        Message("assistant", (ToolUse("c1", "read", {"path": "a.png"}),)),
        Message(
            "tool",
            (ToolResultBlock("c1", "Read image a.png", images=(Image("image/png", "AAAA"),)),),
        ),
    ]
    body = {"model": "m", "messages": openai_chat.serialize_messages(msgs)}
    assert TOOL_IMAGES_HEADER.format(id="c1") in json.dumps(body)
    reply = echo_responder(
        RecordedRequest("POST", "/", {}, json.dumps(body).encode(), "openai-chat")
    )
    assert [b.text for b in reply.blocks if isinstance(b, Text)] == [
        "The tool returned: Read image a.png [image: image/png]"
    ]


@pytest.mark.parametrize("model", ["mock/anthropic", "mock/openai"])
def test_cli_shows_a_marker_and_stream_json_carries_the_image(tmp_path: Path, model: str) -> None:
    data = png(4, 4)
    (tmp_path / "shot.png").write_bytes(data)
    b64 = base64.b64encode(data).decode()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PANTO_") and k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
    }
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "c"))
    env["XDG_DATA_HOME"] = str(tmp_path / "d")
    prompt = 'call read {"path": "shot.png"}'

    def panto(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "panto", "-p", prompt, "--model", model, *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    r = panto()
    assert r.returncode == 0, r.stderr
    marker = f"[image: image/png, {len(data)} B]"
    assert marker in r.stderr
    assert b64 not in r.stdout + r.stderr
    # the model saw the text (the mock echoes the tool results it got)
    assert "The tool returned: Image file shot.png" in r.stdout

    r = panto("--output-format", "stream-json")
    assert r.returncode == 0, r.stderr
    (res,) = [d for d in map(json.loads, r.stdout.splitlines()) if d["type"] == "tool_result"]
    assert res["images"] == [{"type": "image", "media_type": "image/png", "data": b64}]


def test_render_summary_and_expand_show_markers_not_data() -> None:
    from panto.cli.render import Renderer, result_summary

    img = Image("image/png", base64.b64encode(b"x" * 12 * 1024).decode())
    ev = ToolResult(ToolUse("c", "read", {}), "Image file a.png", False, (img,))
    assert result_summary(ev) == "  ↳ Image file a.png [image: image/png, 12 KB]"
    assert result_summary(ToolResult(ev.call, "", False, (img,))) == (
        "  ↳  [image: image/png, 12 KB]"
    )
    assert event_to_dict(ev)["images"] == [
        {"type": "image", "media_type": "image/png", "data": img.data_b64}
    ]
    import io

    r = Renderer(io.StringIO(), io.StringIO(), color=False, show_thinking=False)
    r.event(ev)
    shown = r.expand(None)
    assert shown is not None and shown.endswith("\n" + image_marker(img))
    assert img.data_b64 not in shown + r.err.getvalue()  # type: ignore[attr-defined]


def test_images_count_by_their_pixels_not_their_base64() -> None:
    small = Image("image/png", base64.b64encode(png(30, 25)).decode())
    assert image_tokens(small) == 1  # 750 pixels
    big = Image("image/png", base64.b64encode(png(1600, 1200)).decode())
    assert image_tokens(big) == IMAGE_TOKENS_MAX
    # a JPEG: size unknown here, counted as the most an image costs
    jpeg = Image("image/jpeg", base64.b64encode(b"\xff\xd8\xff" + b"\0" * 300_000).decode())
    assert image_tokens(jpeg) == IMAGE_TOKENS_MAX
    msg = Message("tool", (ToolResultBlock("c", "x" * 40, False, (jpeg, small)),))
    assert estimate_tokens(msg) == 10 + IMAGE_TOKENS_MAX + 1
    user = Message("user", (Text("y" * 8), jpeg))
    assert estimate_tokens(user) == 2 + IMAGE_TOKENS_MAX
    # the transcript for the summarizer names the images, without their data
    t = transcript([user, msg])
    assert "[image: image/jpeg, 293 KB]" in t and jpeg.data_b64[:100] not in t


def test_after_tool_call_hooks_see_the_images_and_keep_them() -> None:
    """Python hooks get the ToolOutput with its images; Lua handlers get
    ``images`` ({media_type, data_b64}); a hook that rewrites the text
    (a string, or {content=...}) keeps the images."""
    from panto.agent.hooks import HookChain
    from panto.lua import LuaRuntime, LuaToolSource
    from panto.tools import ToolCall, ToolOutput

    img = Image("image/png", base64.b64encode(png()).decode())
    call = ToolCall("c", "read", {})
    out = ToolOutput("shot", False, (img,))
    seen: list[ToolOutput] = []

    class Rewrite:
        def after_tool_call(self, call: ToolCall, output: ToolOutput) -> str:
            seen.append(output)
            return output.content + " (hooked)"

    chain = HookChain()
    chain.add(Rewrite())
    res = chain.after_tool_call(call, out)
    assert seen == [out] and res == ToolOutput("shot (hooked)", False, (img,))

    rt = LuaRuntime()
    try:
        rt.execute(r"""
          panto.ext.on("after_tool_call", function(r)
            SEEN = r.images[1].media_type .. " " .. r.images[1].data_b64
            return {content = r.content .. " (lua)"}
          end)
        """)
        res = LuaToolSource(rt).hooks.after_tool_call(call, out)
        assert rt.eval("SEEN") == f"image/png {img.data_b64}"
    finally:
        rt.close()
    assert res == ToolOutput("shot (lua)", False, (img,))


def test_images_the_api_would_reject_are_refused(tmp_path: Path) -> None:
    """Anthropic's limit is 5 MiB of base64 (3.75 MiB of image) and 8000
    pixels a side; an image over it fails that request and every later one
    of the session, so read refuses it and the serializer never sends one."""
    from panto.images import MAX_IMAGE_B64, MAX_IMAGE_BYTES, load_image
    from panto.providers import anthropic

    assert MAX_IMAGE_BYTES == 3 * 1024 * 1024 + 768 * 1024
    (tmp_path / "wide.png").write_bytes(png(8001, 1))
    (tmp_path / "big.png").write_bytes(png() + b"\0" * MAX_IMAGE_BYTES)
    (tmp_path / "ok.png").write_bytes(png(8000, 1) + b"\0" * (MAX_IMAGE_BYTES - 2000))
    events, _, _ = _run_read(tmp_path, "anthropic-messages", "wide.png", "big.png", "ok.png")
    wide, big, ok = [e for e in events if isinstance(e, ToolResult)]
    assert wide.is_error and "8001x1 pixels" in wide.content and not wide.images
    assert big.is_error and "limit for images" in big.content and not big.images
    assert not ok.is_error and len(ok.images[0].data_b64) <= MAX_IMAGE_B64
    with pytest.raises(ValueError, match="8001x1 pixels"):
        load_image(tmp_path / "wide.png")
    with pytest.raises(ValueError, match="bytes, more than"):
        load_image(tmp_path / "big.png")
    assert load_image(tmp_path / "ok.png") == ok.images[0]

    huge = Image("image/png", "A" * (MAX_IMAGE_B64 + 4))
    msgs = [Message("tool", (ToolResultBlock("c", "shot", False, (huge,)),)), Message.user("x")]
    (result, _) = anthropic.serialize_messages(msgs)[0]["content"]
    assert result["content"] == [
        {"type": "text", "text": "shot"},
        {
            "type": "text",
            "text": "[image: image/png, 3.8 MB] not sent: over the API's 5 MiB (base64) "
            "limit for an image",
        },
    ]


@pytest.mark.parametrize("wire", WIRES)
def test_a_model_without_images_gets_notes_instead(tmp_path: Path, wire: str) -> None:
    """``[models."p/m"] images = false`` (a text-only model behind an
    OpenAI-compatible server would reject the request, and every later one):
    each image, of a prompt or a tool result, is a note naming it."""
    provider = PROVIDER[wire]
    (tmp_path / ".panto").mkdir()
    (tmp_path / ".panto" / "config.toml").write_text(
        f'[models."{provider}/text-only"]\nimages = false\n'
    )
    config = Config.load(env={}, cwd=tmp_path, model=f"{provider}/text-only")
    assert config.models == {f"{provider}/text-only": {"images": False}}
    data = png()
    (tmp_path / "shot.png").write_bytes(data)
    img = Image("image/png", base64.b64encode(data).decode())
    note = f"[image: image/png, {len(data)} B] not sent: this model does not take images"
    note += " ([models] images = false)"
    with ScriptedServer() as server:
        server.push(Reply([ToolUse("toolu_0", "read", {"path": "shot.png"})]), Reply([Text("ok")]))
        from dataclasses import replace

        config = replace(
            config, base_url=server.base_url(wire), api_key="k", max_retries=0, cache_enabled=False
        )
        agent = open_agent(config, cwd=tmp_path, session=None, extensions="builtin")
        try:
            agent.submit_user_message("look at this", [img])
            with agent.run() as stream:
                list(stream)
        finally:
            agent.close()
        first, second = (r.json["messages"] for r in server.requests)
    text = f"Image file shot.png (image/png, {len(data)} bytes), attached."
    if wire == "anthropic-messages":
        assert first[-1]["content"] == [
            {"type": "text", "text": "look at this"},
            {"type": "text", "text": note},
        ]
        assert second[-1]["content"][0]["content"] == [
            {"type": "text", "text": text},
            {"type": "text", "text": note},
        ]
    else:
        assert first[-1] == {"role": "user", "content": "look at this\n" + note}
        assert second[-1] == {
            "role": "tool",
            "tool_call_id": "toolu_0",
            "content": text + "\n" + note,
        }
    assert img.data_b64 not in json.dumps([first, second])


def test_images_a_tool_gets_wrong_are_fixed_or_dropped_with_a_note(
    server: ScriptedServer,
) -> None:
    """Any tool (a Lua extension's panto.tool_result, a Python ToolSource)
    may return an image the API would reject -- and then reject every later
    request of the session: the turn corrects a wrong media type from the
    data and drops what is not an image, too large or too wide, saying so."""
    from support.agent import make_config

    from panto.agent import Agent
    from panto.images import MAX_IMAGE_B64
    from panto.tools import ToolCall, ToolDecl, ToolOutput, ToolSource

    good = base64.b64encode(png()).decode()
    wide = base64.b64encode(png(9000, 1)).decode()
    svg = base64.b64encode(b"<svg xmlns='http://www.w3.org/2000/svg'/>").decode()
    huge = good + "A" * (MAX_IMAGE_B64 - len(good) + 4)

    class Odd(ToolSource):
        name = "odd"

        def decls(self) -> list[ToolDecl]:
            return [ToolDecl("odd", "odd images")]

        def invoke_batch(self, calls: list[ToolCall]) -> list[ToolOutput]:
            images = (
                Image("image/jpeg", good),  # a PNG, wrongly named
                Image("image/svg+xml", svg),
                Image("image/png", huge),
                Image("image/png", wide),
            )
            return [ToolOutput("four", False, images) for _ in calls]

    server.push(Reply([ToolUse("c1", "odd", {})]), Reply([Text("ok")]))
    with Agent(make_config(server, "anthropic-messages")) as agent:
        agent.register_tool_source(Odd())
        agent.submit_user_message("go")
        with agent.run() as stream:
            (res,) = [e for e in stream if isinstance(e, ToolResult)]
        block = agent.conversation[-2].content[0]
    assert res.images == block.images == (Image("image/png", good),)
    assert (
        res.content
        == block.content
        == (
            "four\n"
            "[image dropped: the image/svg+xml data is not a PNG, JPEG, GIF or WebP image]\n"
            "[image dropped: image/png, 3.8 MB, over the 5 MiB (base64) limit]\n"
            "[image dropped: 9000x1 pixels, over 8000 a side]"
        )
    )
    sent = server.requests[-1].json["messages"][-1]["content"][0]["content"]
    assert [p["type"] for p in sent] == ["text", "image"]
    assert sent[1]["source"]["media_type"] == "image/png"

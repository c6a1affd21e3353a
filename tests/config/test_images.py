"""Image blocks: @path in a prompt, both wires, and the session round trip
(images are stored base64 in the session entry)."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

from panto.agent import Agent
from panto.config import Config
from panto.conversation import Image, Message, Text
from panto.images import load_image, prompt_images
from panto.sessions import FSJSONLStore
from panto.testing import Reply, ScriptedServer


def png(path: Path, w: int = 1, h: int = 1) -> bytes:
    """A valid w x h grey PNG, written to ``path``."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        c = kind + data
        return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c))

    raw = b"".join(b"\x00" + b"\x80" * w for _ in range(h))
    data = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def test_prompt_references_become_images(tmp_path: Path) -> None:
    a = png(tmp_path / "shot.png")
    b = png(tmp_path / "my pics" / "b.PNG", 2, 2)
    (tmp_path / "notes.png").write_text("not an image")
    text = (
        "compare @shot.png and @my\\ pics/b.PNG, also @shot.png again; "
        f"and {tmp_path}/notes.png and @missing.png. email me@x.png is not a file"
    )
    out, images, problems = prompt_images(text, tmp_path)
    assert out == text
    assert images == [
        Image("image/png", base64.b64encode(a).decode()),
        Image("image/png", base64.b64encode(b).decode()),
    ]
    assert len(problems) == 2
    assert "notes.png: not a PNG, JPEG, GIF or WebP image" in problems[0]
    assert "missing.png: no such image file" in problems[1]
    quoted, imgs, _ = prompt_images(f"see '{tmp_path / 'my pics' / 'b.PNG'}'", tmp_path)
    assert imgs == images[1:]


def _body(server: ScriptedServer, wire: str, image: Image) -> dict:
    provider = "anthropic" if wire == "anthropic-messages" else "openai"
    config = Config(
        provider=provider, model="m", base_url=server.base_url(wire), api_key="k", max_retries=0
    )
    server.push(Reply([Text("a cat")]))
    with Agent(config) as agent:
        agent.submit_user_message("what is this?", [image])
        with agent.run() as stream:
            list(stream)
    return server.requests[-1].json


def test_images_on_both_wires(tmp_path: Path) -> None:
    img = load_image(tmp_path / "x.png") if png(tmp_path / "x.png") else None
    assert img is not None and img.media_type == "image/png"
    with ScriptedServer() as server:
        anth = _body(server, "anthropic-messages", img)
        oai = _body(server, "openai-chat", img)
    content = anth["messages"][0]["content"]
    assert [b["type"] for b in content] == ["text", "image"]
    assert content[1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": img.data_b64,
    }
    assert oai["messages"][0] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{img.data_b64}"}},
        ],
    }


def test_images_round_trip_through_a_session(tmp_path: Path) -> None:
    img = Image("image/png", base64.b64encode(png(tmp_path / "x.png")).decode())
    msg = Message("user", (Text("look"), img))
    assert Message.from_dict(msg.to_dict()) == msg
    store = FSJSONLStore(tmp_path / "sessions", str(tmp_path))
    store.append_messages([msg, Message("assistant", (Text("ok"),))])
    path = store.path
    store.close()
    again = FSJSONLStore.open(path)
    try:
        loaded = again.load_conversation()
    finally:
        again.close()
    assert loaded.conversation[0] == msg
    assert '"type":"image","media_type":"image/png","data":"' in Path(path).read_text().replace(
        " ", ""
    )


def test_image_only_prompt_has_no_empty_text_block(tmp_path: Path) -> None:
    img = load_image(tmp_path / "x.png") if png(tmp_path / "x.png") else None
    assert img is not None
    with ScriptedServer() as server:
        body = _body_text(server, img)
    assert [b["type"] for b in body["messages"][0]["content"]] == ["image"]


def _body_text(server: ScriptedServer, image: Image) -> dict:
    config = Config(
        provider="anthropic",
        model="m",
        base_url=server.base_url("anthropic-messages"),
        api_key="k",
        max_retries=0,
    )
    server.push(Reply([Text("ok")]))
    with Agent(config) as agent:
        agent.submit_user_message("", [image])
        with agent.run() as stream:
            list(stream)
    return server.requests[-1].json


def test_at_file_attaches_text_files_only(tmp_path: Path) -> None:
    import os

    from panto.images import FILE_BLOCK_START, prompt_attachments, typed_text

    (tmp_path / "calc.py").write_text("x = 1")
    (tmp_path / "blob.bin").write_bytes(b"ab\0cd")
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    (tmp_path / "src").mkdir()
    os.mkfifo(tmp_path / "pipe")  # reading it would block forever
    text = (
        "fix @calc.py. and @latin.txt, not @blob.bin @src @pipe @/dev/zero; "
        "@someone said @property and me@calc.py; again: @calc.py"
    )
    att = prompt_attachments(text, tmp_path)
    assert [b.text for b in att.files] == [
        f'{FILE_BLOCK_START}calc.py">\nx = 1\n</file>',
        f'{FILE_BLOCK_START}latin.txt">\ncaf\ufffd\n</file>',
    ]
    assert att.shown == ["[file: calc.py, 5 B]", "[file: latin.txt, 5 B]"]
    assert att.images == []
    assert att.problems == [
        f"{tmp_path / 'blob.bin'}: not a text file (sent as text)",
        "@src: a directory, not attached (name files: @dir/file)",
        "@pipe: not a regular file, not attached",
        "@/dev/zero: not a regular file, not attached",
    ]
    msg = Message("user", (Text(text), *att.files))
    assert typed_text(msg) == text
    assert FILE_BLOCK_START in msg.text
    # nothing named: nothing read, nothing said
    none = prompt_attachments("a plain prompt, @nobody here", tmp_path)
    assert (none.files, none.images, none.shown, none.problems) == ([], [], [], [])

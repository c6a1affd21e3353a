"""Attachments as a new user makes them (issue 23, item 11): a screenshot
dragged in at the start of a REPL line is sent as an image, not taken for a
command; ``@file`` of a text file attaches its contents; what was attached
is shown, in the REPL and in ``-p``."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from support.repl import Env, Pty, user_texts

from panto.conversation import Text
from panto.testing import Reply, ScriptedServer

pytestmark = pytest.mark.timeout(90)


def png(path: Path) -> bytes:
    """A valid 1x1 grey PNG, written to ``path``."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        c = kind + data
        return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c))

    data = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"\x00\x80"))
        + chunk(b"IEND", b"")
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def scripted(env: Env, server: ScriptedServer) -> tuple[str, ...]:
    env.vars["ANTHROPIC_API_KEY"] = "sk-test"
    return ("--model", "anthropic/m", "--base-url", server.url, "--no-extensions")


def _blocks(server: ScriptedServer) -> list[dict]:
    content = server.requests[-1].json["messages"][-1]["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def test_a_dragged_image_path_at_the_start_of_a_line_is_sent_as_an_image(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    shot = env.home / "Pictures" / "my shot.png"
    png(shot)
    dragged = str(shot).replace(" ", "\\ ")
    t = term(*scripted(env, server))
    t.prompt()
    t.line(f"{dragged} what is wrong here?")
    t.expect("You said:")
    t.prompt()
    t.pump()
    screen = t.screen_text()
    assert "unknown command" not in screen
    assert "[image: my shot.png, 67 B]" in screen
    assert [b["type"] for b in _blocks(server)] == ["text", "image"]
    assert user_texts(server.requests[-1].json) == [f"{dragged} what is wrong here?"]
    # a command still wins over a path, and an unknown command that names no file is one
    t.line("/nosuch/shot.png hi")
    t.expect("unknown command /nosuch/shot.png")
    t.prompt()
    assert len(server.requests) == 1


def test_at_file_attaches_a_text_file_in_the_repl(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    (env.cwd / "calc.py").write_text("def div(a, b):\n    return a / b\n")
    t = term(*scripted(env, server))
    t.prompt()
    t.line("why does @calc.py fail?")
    t.expect("You said:")
    t.prompt()
    t.pump()
    assert "[file: calc.py, 32 B]" in t.screen_text()
    blocks = _blocks(server)
    assert blocks[0]["text"] == "why does @calc.py fail?"
    assert blocks[1]["text"] == (
        '\n\n<file path="calc.py">\ndef div(a, b):\n    return a / b\n</file>'
    )


def test_at_file_in_one_shot_is_attached_shown_and_cut_when_large(
    env: Env, server: ScriptedServer
) -> None:
    from panto.images import MAX_FILE_BYTES

    (env.cwd / "big.log").write_text(("y" * 99 + "\n") * (MAX_FILE_BYTES // 100 + 50))
    png(env.cwd / "shot.png")
    server.push(Reply([Text("ok")]))  # not the echo: 100 KB streamed back is slow
    r = env.run("-p", "see @big.log, and @shot.png.", *scripted(env, server))
    assert r.returncode == 0, r.stderr
    assert "panto: [image: shot.png, 67 B]" in r.stderr
    assert "panto: [file: big.log, cut to the first 98 KB of 103 KB]" in r.stderr
    blocks = _blocks(server)
    assert [b["type"] for b in blocks] == ["text", "text", "image"]
    attached = blocks[1]["text"]
    assert attached.startswith('\n\n<file path="big.log">\n' + "y" * 99 + "\n")
    assert "[cut: the first 100,000 of the file's 105,000 bytes are attached" in attached
    assert len(attached) < MAX_FILE_BYTES + 200


def test_an_unanswered_prompt_comes_back_as_typed_without_the_files(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    from panto.testing import HTTPError

    (env.cwd / "calc.py").write_text("def div(a, b):\n    return a / b\n")
    server.push(
        HTTPError(
            400, {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
        )
    )
    r = env.run("-p", "why does @calc.py fail?", *scripted(env, server))
    assert r.returncode == 1
    t = term(*scripted(env, server), "--continue")
    t.expect("not resent: 'why does @calc.py fail\\?'\r\n")
    t.prompt()
    t.pump()
    shown = [line for line in t.screen_lines() if line.strip()]
    assert shown[-1] == "› why does @calc.py fail?"  # in the input line, as typed
    t.send("\r")  # resent: the file is attached again, once
    t.expect("You said:")
    t.prompt()
    assert [b["text"] for b in _blocks(server)] == [
        "why does @calc.py fail?",
        '\n\n<file path="calc.py">\ndef div(a, b):\n    return a / b\n</file>',
    ]

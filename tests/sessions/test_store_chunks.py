"""The session loader reads files in chunks; where the chunk ends fall must
not change anything: the conversation, what is dropped as torn, where the
next append cuts the file, and the error a corrupt file raises."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from panto.conversation import Message, Text, Thinking, ToolResultBlock, ToolUse, Usage
from panto.errors import SessionError
from panto.sessions import FSJSONLStore, context, fastload

_messages = st.sampled_from(
    [
        Message.user("plain prompt"),
        Message.user("naïve — ünïcödé ✓ 𝄞"),
        Message("system", (Text("be brief"),)),
        Message(
            "assistant",
            (Thinking("hmm", "sig"), Text("ok"), ToolUse("t1", "bash", {"command": "ls"})),
            Usage(10, 2, 0, 5),
            "tool_use",
            "anthropic",
            "claude-x",
        ),
        Message("tool", (ToolResultBlock("t1", "a.txt\nb.txt"),)),
        Message("assistant", (Text("done"),), None, "stop", "openai", "gpt-x"),
    ]
)

# ways to damage a file: (what, argument)
_damage = st.one_of(
    st.just(("none", 0)),
    st.tuples(st.just("tear"), st.integers(1, 400)),  # cut off the last n bytes
    st.tuples(st.just("blank"), st.integers(1, 50)),  # a blank line after entry k
    st.tuples(st.just("corrupt"), st.integers(1, 50)),  # garbage in line k
    st.tuples(st.just("bad_utf8"), st.integers(1, 50)),  # invalid UTF-8 in line k
    st.tuples(st.just("drop_last_line"), st.integers(0, 0)),  # an incomplete batch
)


def _write(root: Path, batches: list[list[Message]], model_changes: bool) -> Path:
    with FSJSONLStore(root, "/chunks/project", durability="none") as s:
        for i, batch in enumerate(batches):
            if model_changes and i % 2:
                s.append_model_change("mock", f"m{i}")
            s.append_messages(batch, system_mode="replace" if i % 3 == 2 else "append")
    return s.path


def _damaged(raw: bytes, what: str, k: int) -> bytes:
    lines = raw.split(b"\n")[:-1]
    k = min(k, len(lines) - 1)
    if what == "tear":
        return raw[: max(0, len(raw) - k)]
    if what == "blank":
        lines.insert(k + 1, b"   ")
    elif what == "corrupt":
        lines[k] = lines[k][:-1]  # no closing brace
    elif what == "bad_utf8":
        lines[k] = lines[k][:5] + b"\xff\xfe" + lines[k][5:]
    elif what == "drop_last_line":
        lines = lines[:-1]
    return b"\n".join(lines) + b"\n"


def _outcome(path: Path) -> Any:
    """Everything loading tells: the context, or the error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = fastload.parse_file(path)
            loaded = context.build_context(p, str(path))
    except SessionError as exc:
        return ("error", str(exc))
    chain = p.chain(str(path))
    return (
        loaded.conversation.messages,
        loaded.dangling_user,
        loaded.entry_ids,
        p.header,
        p.good_size,
        p.size,
        p.dropped,
        p.active_model(chain),
    )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batches=st.lists(st.lists(_messages, min_size=1, max_size=4), min_size=0, max_size=8),
    model_changes=st.booleans(),
    damage=_damage,
    chunk=st.integers(1, 700),
)
def test_any_chunk_size_loads_the_same(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    batches: list[list[Message]],
    model_changes: bool,
    damage: tuple[str, int],
    chunk: int,
) -> None:
    root = tmp_path / f"s{chunk}"
    path = _write(root, batches, model_changes)
    if path.exists():
        path.write_bytes(_damaged(path.read_bytes(), *damage))
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    whole = _outcome(path)
    monkeypatch.setattr(fastload, "_CHUNK", chunk)
    assert _outcome(path) == whole
    monkeypatch.undo()


def test_damage_is_detected_at_small_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The property above compares chunk sizes with each other; this pins
    what they agree on, with chunk ends inside every line."""
    monkeypatch.setattr(fastload, "_CHUNK", 7)
    batches = [[Message.user("q"), Message("assistant", (Text("a"),))]] * 3
    path = _write(tmp_path, batches, False)
    raw = path.read_bytes()
    path.write_bytes(_damaged(raw, "corrupt", 3))
    assert _outcome(path) == ("error", f"{path}:4: corrupt session entry (invalid JSON)")
    path.write_bytes(_damaged(raw, "bad_utf8", 2))
    assert _outcome(path) == ("error", f"{path}:3: corrupt line (not UTF-8)")
    path.write_bytes(_damaged(raw, "bad_utf8", 6))  # the last line: a torn write
    msgs, dangling, *_, dropped, _ = _outcome(path)
    assert dropped == ["an unparsable last line (line 7)", "an incomplete batch of 1 entries"]
    assert [m.text for m in msgs] == ["q", "a", "q", "a"]
    path.write_bytes(raw + b'{"type":"mess')
    msgs, dangling, ids, header, good, size, dropped, _ = _outcome(path)
    assert dropped == ["a torn last line (no newline)"]
    assert (good, size) == (len(raw), len(raw) + 13)
    assert len(msgs) == 6

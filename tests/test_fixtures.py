"""The shared stream fixtures (tests/fixtures/<name>.sse + <name>.json) decoded
by panto.StreamDecoder: whole, one byte at a time, in random pieces, and (via
hypothesis) split anywhere -- every split must give the same events.  The
expected JSON is written by hand from the wire semantics; see
tests/fixtures/README.md for the format."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import panto
from panto.events import MessageComplete, event_to_dict

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.sse"))

# Fixtures whose hand-written expectation the implementation does not meet
# yet (reported to the lead).  strict: the test fails once it is fixed, so
# the entry gets removed.
KNOWN_DIFFERENCES: dict[str, str] = {}


# Every test here runs twice: on the C path (panto._fastevents builds the
# events) and on the cffi fallback (decoder_path, tests/conftest.py).
pytestmark = pytest.mark.usefixtures("decoder_path")


def params(names):
    return [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[n]))
        if n in KNOWN_DIFFERENCES
        else n
        for n in names
    ]


def load(name: str) -> tuple[bytes, dict]:
    body = (FIXTURES / f"{name}.sse").read_bytes()
    expected = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return body, expected


def error_dict(e: BaseException | None) -> dict | None:
    if e is None:
        return None
    if isinstance(e, panto.ProviderError):
        return {
            "code": "provider",
            "retryable": bool(e.retryable),
            "provider_type": e.type,
            "message": e.message,
        }
    assert isinstance(e, panto.DecodeError), f"unexpected exception type {type(e).__name__}: {e}"
    return {"code": e.code, "retryable": False, "provider_type": None, "message": str(e)}


def run(wire: str, chunks, **options) -> tuple[list[dict], dict | None, dict | None]:
    """Feed `chunks` the way a host does; returns (event dicts, message dict
    of the MessageComplete or None, error dict or None)."""
    dec = panto.StreamDecoder(wire, **options)
    events = []
    error: BaseException | None = None
    try:
        for chunk in chunks:
            dec.feed(chunk)
            for ev in dec:
                events.append(ev)
    except panto.PantoError as e:
        error = e
    try:
        dec.close()
    except panto.PantoError as e:
        error = error or e
    try:
        for ev in dec:  # events decoded by close(), then the error again
            events.append(ev)
    except panto.PantoError as e:
        assert error is None or e is error or type(e) is type(error), (e, error)
        error = error or e
    message = None
    for ev in events:
        if isinstance(ev, MessageComplete):
            message = ev.message.to_dict()
    # the terminal invariant: MessageComplete is the last event, at most once
    kinds = [type(ev).__name__ for ev in events]
    if "MessageComplete" in kinds:
        assert kinds.index("MessageComplete") == len(kinds) - 1, kinds
    return [event_to_dict(ev) for ev in events], message, error_dict(error)


def check(name: str, events, message, error) -> None:
    _, exp = load(name)
    if events != exp["events"]:
        lines = []
        for i in range(max(len(events), len(exp["events"]))):
            got = events[i] if i < len(events) else None
            want = exp["events"][i] if i < len(exp["events"]) else None
            if got != want:
                lines.append(f"[{i}] got  {json.dumps(got, ensure_ascii=False)}")
                lines.append(f"[{i}] want {json.dumps(want, ensure_ascii=False)}")
        pytest.fail(f"{name}: events differ\n" + "\n".join(lines[:20]))
    assert message == exp["message"], f"{name}: assembled message differs"
    want = exp["error"]
    if want is None:
        assert error is None, f"{name}: unexpected error {error}"
    else:
        assert error is not None, f"{name}: expected a {want['code']} error, got none"
        got = {k: error[k] for k in ("code", "retryable", "provider_type")}
        assert got == {k: want[k] for k in ("code", "retryable", "provider_type")}, (name, error)
        assert want["message_contains"] in error["message"], (name, error["message"])


def test_fixtures_present():
    assert len(NAMES) >= 40
    for name in NAMES:
        assert (FIXTURES / f"{name}.json").exists(), name


def test_fixture_json_format():
    allowed_codes = {"bad_json", "bad_sse", "protocol", "provider", "truncated", "limit"}
    for name in NAMES:
        _, exp = load(name)
        assert exp["wire"] in ("openai-chat", "anthropic-messages", "openai-responses", "sse"), name
        assert isinstance(exp["events"], list), name
        if exp["error"] is not None:
            assert exp["error"]["code"] in allowed_codes, name
            assert set(exp["error"]) == {
                "code",
                "retryable",
                "provider_type",
                "message_contains",
            }, name
        if exp["message"] is not None:
            assert exp["events"][-1]["type"] == "message_complete", name
            assert exp["events"][-1]["message"] == exp["message"], name


@pytest.mark.parametrize("name", params(NAMES))
def test_whole(name):
    body, exp = load(name)
    check(name, *run(exp["wire"], [body]))


@pytest.mark.parametrize("name", params(NAMES))
def test_byte_at_a_time(name):
    body, exp = load(name)
    check(name, *run(exp["wire"], [body[i : i + 1] for i in range(len(body))]))


@pytest.mark.parametrize("name", params(NAMES))
def test_random_pieces(name):
    body, exp = load(name)
    rng = random.Random(name)
    for _ in range(5):
        chunks, i = [], 0
        while i < len(body):
            n = rng.choice((0, 1, 2, 3, 7, 16, 64, 333))
            chunks.append(body[i : i + n])
            i += n
        check(name, *run(exp["wire"], chunks))


@pytest.mark.parametrize(
    "name",
    params([n for n in NAMES if load(n)[1]["error"] is None and load(n)[1]["message"] is not None]),
)
def test_decode_accumulate(name):
    body, exp = load(name)
    msg = panto.accumulate(panto.decode(exp["wire"], [body[:17], body[17:]]))
    assert msg.to_dict() == exp["message"]


def runs(events: list[dict]) -> list[dict]:
    """Event dicts with each run of consecutive content deltas of one block
    joined (what StreamDecoder(merge_deltas=True) may do)."""
    out: list[dict] = []
    for ev in events:
        prev = out[-1] if out else None
        if (
            ev["type"] == "content_delta"
            and prev is not None
            and prev["type"] == "content_delta"
            and (prev["index"], prev["kind"]) == (ev["index"], ev["kind"])
        ):
            out[-1] = {**prev, "text": prev["text"] + ev["text"]}
        else:
            out.append(ev)
    return out


@pytest.mark.parametrize("name", params(NAMES))
def test_merge_deltas(name):
    """merge_deltas=True: the same events with runs of a block's deltas
    joined -- exactly one per run when the body comes at once -- the same
    message and the same error, under any chunking."""
    body, exp = load(name)
    want = runs(exp["events"])
    events, message, error = run(exp["wire"], [body], merge_deltas=True)
    assert events == want
    check(name, exp["events"], message, error)
    rng = random.Random(name)
    for _ in range(5):
        chunks, i = [], 0
        while i < len(body):
            n = rng.choice((0, 1, 2, 3, 7, 16, 64, 333))
            chunks.append(body[i : i + n])
            i += n
        events, message, error = run(exp["wire"], chunks, merge_deltas=True)
        assert runs(events) == want
        check(name, exp["events"], message, error)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_split_same_events(data):
    name = data.draw(
        st.sampled_from([n for n in NAMES if n not in KNOWN_DIFFERENCES]), label="fixture"
    )
    body, exp = load(name)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=24), label="cuts"))
    bounds = [0, *cuts, len(body)]
    chunks = [body[a:b] for a, b in itertools.pairwise(bounds)]
    check(name, *run(exp["wire"], chunks))


# -- the `panto decode` CLI --------------------------------------------------


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("openai_tool_parallel_interleaved", ["--wire", "openai-chat"]),
        ("anthropic_thinking_signature", ["--chunk-size", "1"]),  # wire auto-detected
    ],
)
def test_cli_decode(name, extra):
    _, exp = load(name)
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "panto", "decode", *extra, str(FIXTURES / f"{name}.sse")],
        capture_output=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    lines = [ln for ln in proc.stdout.decode("utf-8").splitlines() if ln.strip()]
    objs = [json.loads(ln) for ln in lines]
    assert objs[:-1] == exp["events"]
    assert objs[-1] == {"type": "message", **exp["message"]}


def test_cli_decode_error():
    _, exp = load("anthropic_overloaded_error")
    proc = subprocess.run(
        [sys.executable, "-m", "panto", "decode", str(FIXTURES / "anthropic_overloaded_error.sse")],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 1
    objs = [json.loads(ln) for ln in proc.stdout.decode("utf-8").splitlines() if ln.strip()]
    assert objs == exp["events"]
    assert b"overloaded_error" in proc.stderr


def test_web_search_turn_round_trips_to_the_next_request():
    """A turn with server-side blocks (issue 15): decoded, stored the way
    sessions store messages (Message.to_dict as JSON), resumed, and sent back
    on the Anthropic wire with every block; dropped on the OpenAI wire."""
    from panto.config import Config
    from panto.conversation import Message, ServerBlock, Text, fast_message_from_dict
    from panto.providers import make_provider

    body = (FIXTURES / "anthropic_web_search.sse").read_bytes()
    msg = panto.accumulate(panto.decode("anthropic-messages", [body]))
    server = [b for b in msg.content if isinstance(b, ServerBlock)]
    assert [b.type for b in server] == ["server_tool_use", "web_search_tool_result"]
    cited = msg.content[3]
    assert isinstance(cited, Text) and cited.citations[0]["url"].startswith("https://")

    stored = json.dumps(msg.to_dict(), ensure_ascii=False)
    resumed = Message.from_dict(json.loads(stored))
    assert resumed == msg
    # the sessions' fast loader builds the same blocks (and stays on)
    assert fast_message_from_dict is not Message.from_dict
    assert fast_message_from_dict(json.loads(stored)) == msg
    assert [b.raw_json for b in resumed.content if isinstance(b, ServerBlock)] == [
        b.raw_json for b in server
    ]

    def request(provider: str) -> bytes:
        config = Config(provider=provider, model="m", base_url="http://127.0.0.1:9", api_key="k")
        convo = [Message.user("Weather in Panto?"), resumed, Message.user("Thanks")]
        return make_provider(config).build_request(convo, []).body

    sent = request("anthropic")
    # the result block arrived compact: it goes back byte for byte
    assert server[1].raw_json.encode() in sent
    blocks = json.loads(sent)["messages"][1]["content"]
    assert blocks == [
        {"type": "text", "text": "I'll search for that."},
        json.loads(server[0].raw_json),
        json.loads(server[1].raw_json),
        {"type": "text", "text": cited.text, "citations": list(cited.citations)},
    ]
    # the OpenAI wire has no place for them: only the text goes
    oa = json.loads(request("openai"))["messages"]
    assert oa[1] == {"role": "assistant", "content": "I'll search for that." + cited.text}


def test_cli_decode_into_a_closed_pipe_stops_quietly(tmp_path):
    """``panto decode big.sse | head -1``: no "Broken pipe" error line (the
    decode loop's OSError handler caught it before panto's main could)."""
    text = (FIXTURES / "anthropic_text.sse").read_text()
    start, _, rest = text.partition("event: content_block_delta")
    delta = (
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        '"delta":{"type":"text_delta","text":"' + "x" * 200 + '"}}\n\n'
    )
    big = tmp_path / "big.sse"
    big.write_text(start + delta * 5000 + "event: content_block_delta" + rest)
    proc = subprocess.Popen(
        [sys.executable, "-m", "panto", "decode", str(big)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.readline().startswith(b'{"type":"message_start"')
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(60) == 141
    assert err == b"", err

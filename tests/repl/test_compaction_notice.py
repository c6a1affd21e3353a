"""Auto-compaction as a user meets it: announced (start, tokens before and
after, how to undo and turn it off) in the REPL's status line and output,
on stderr in ``-p``, as events in stream-json; and Ctrl-C during it, then
Enter, resends the prompt verbatim (the newcomer report's repro: a stub
that never answers the first summary request)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from support.repl import Env, Pty
from support.trust import trust_project

from panto.conversation import Text, Usage
from panto.testing import RecordedRequest, Reply, ScriptedServer

pytestmark = pytest.mark.timeout(120)

PROMPT2 = "prompt two: rename div to divide everywhere"


def _text(req: RecordedRequest) -> str:
    users = [m for m in req.json["messages"] if m["role"] == "user"]
    c = users[-1]["content"]
    return c if isinstance(c, str) else "".join(b.get("text", "") for b in c)


class Stub:
    """``ok: <text>`` with a usage that fills the 1,500-token window; the
    first summary request hangs (after its headers) when ``hang``."""

    def __init__(self, hang: bool) -> None:
        self.hang = hang
        self.summaries = 0

    def __call__(self, req: RecordedRequest) -> Reply:
        text = _text(req)
        if text.startswith("<conversation>"):
            self.summaries += 1
            if self.hang and self.summaries == 1:
                return Reply([Text("never")], stall_after=0, stall=60)
            return Reply([Text("SUMMARY: the user said hello")])
        return Reply([Text(f"ok: {text}")], usage=Usage(1400, output_tokens=5))


def _project(env: Env, server: ScriptedServer) -> None:
    """The report's configuration, in the user config (a project's would
    ask for trust first)."""
    d = Path(env.vars["XDG_CONFIG_HOME"]) / "panto"
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.toml").write_text(
        'model = "stub/m"\n'
        "[providers.stub]\n"
        'wire = "openai-chat"\n'
        f'base_url = "{server.url}/v1"\n'
        '[models."stub/m"]\n'
        "context_window = 1500\n"
        "[compaction]\n"
        "reserve_tokens = 100\n"
    )
    trust_project(env.cwd, env.vars)  # its [providers.stub] applies once trusted


def _session_entries(env: Env) -> list[dict]:
    (path,) = env.sessions()
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def test_ctrl_c_during_auto_compaction_then_enter_keeps_the_prompt(
    env: Env, term: Callable[..., Pty]
) -> None:
    stub = Stub(hang=True)
    with ScriptedServer(responder=stub) as server:
        _project(env, server)
        t = term("--no-extensions")
        t.prompt()
        t.line("hello one")
        t.expect("ok: hello one")
        t.prompt()
        t.line(PROMPT2)
        t.expect(r"auto-compaction: the context \(~1,4\d\d tokens\) reached 1,200")
        t.expect(r"waiting for auto-compaction · \d+\.\ds · the model summarizes")
        assert "no reply yet" not in t.raw
        entries_before = _session_entries(env)
        t.send("\x03")
        t.expect(r"\[cancelled\]")
        t.expect("back in the input line")
        t.prompt()
        # nothing was recorded by the cancelled compaction
        assert _session_entries(env) == entries_before
        t.send("\r")  # Enter resends the prompt
        t.expect(r"auto-compacted \d+ messages into a summary: ~1,4\d\d -> ~\d+ tokens")
        t.expect(r"undo: /tree")
        t.expect("ok: " + PROMPT2)
        t.prompt()
        t.send("\x04")
        t.wait_exit()
        requests = list(server.requests)

    summaries = [r for r in requests if _text(r).startswith("<conversation>")]
    assert len(summaries) == 2
    assert all(PROMPT2 not in _text(r) for r in summaries)  # never summarized
    assert _text(requests[-1]) == PROMPT2
    assert "SUMMARY: the user said hello" in json.dumps(requests[-1].json)
    compactions = [e for e in _session_entries(env) if e["type"] == "compaction"]
    assert len(compactions) == 1 and compactions[0]["first_kept_id"] is not None


def test_print_mode_announces_on_stderr_and_stream_json_has_events(env: Env) -> None:
    with ScriptedServer(responder=Stub(hang=False)) as server:
        _project(env, server)
        r = env.run("-p", "hello one", "--no-extensions")
        assert r.returncode == 0, r.stderr
        assert "auto-compact" not in r.stderr
        r = env.run("-p", PROMPT2, "--continue", "--no-extensions")
        assert r.returncode == 0, r.stderr
        assert "auto-compaction: the context (~1,4" in r.stderr
        assert re.search(r"auto-compacted \d+ messages into a summary: ~1,4\d\d -> ~", r.stderr)
        assert "[compaction] auto = false" in r.stderr
        assert r.stdout.strip() == "ok: " + PROMPT2
        r = env.run(
            "-p", "three", "--continue", "--no-extensions", "--output-format", "stream-json"
        )
        assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "compaction_start" and kinds[1] == "compaction_end", kinds
    start, end = events[0], events[1]
    assert start["tokens"] >= start["limit"] == 1200 and start["window"] == 1500
    assert end["error"] is None and end["entry_id"] and end["messages"] >= 1
    assert end["tokens_after"] < end["tokens_before"]
    assert kinds[-1] == "result"


def test_docs_name_the_events() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    text = (docs / "agent.md").read_text() + (docs / "cli.md").read_text()
    for name in ("CompactionStart", "CompactionEnd", "compaction_start", "compaction_end"):
        assert name in text, name

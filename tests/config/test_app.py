"""panto.app: the one composition root."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.config import write

from panto.app import open_agent, open_session
from panto.config import Config
from panto.errors import ConfigError
from panto.sessions import FSJSONLStore, NullStore


def _turn(agent, text: str = "hi") -> str:
    agent.submit_user_message(text)
    with agent.run() as stream:
        list(stream)
    return agent.conversation[-1].text


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "AGENTS.md", "RULES-V1")
    return root


def _count_loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    orig = Config.load.__func__  # type: ignore[attr-defined]

    def counting(cls, *a, **kw):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return orig(cls, *a, **kw)

    monkeypatch.setattr(Config, "load", classmethod(counting))
    return calls


def test_open_agent_loads_the_config_once_and_passes_the_object_down(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_loads(monkeypatch)
    agent = open_agent(cwd=repo, model="mock/anthropic", session=None)
    try:
        assert calls[0] == 1
        assert {"read", "write", "edit", "bash"} <= {d.name for d in agent.tools}
        assert _turn(agent) == "You said: hi"
        assert calls[0] == 1
        assert isinstance(agent.store, NullStore)
    finally:
        agent.close()


def test_new_session_records_model_and_prompt_then_resume_keeps_it(repo: Path) -> None:
    with open_session(cwd=repo, model="mock/anthropic", extensions=False) as s:
        assert isinstance(s.store, FSJSONLStore) and not s.resumed
        sid = s.store.session_id
        _turn(s.agent)
        first = [m.text for m in s.agent.conversation if m.role == "system"]
    assert len(first) == 1 and "RULES-V1" in first[0]
    # an unchanged prompt: nothing new recorded for the system prompt
    with open_session(cwd=repo, session=("resume", sid[:8]), extensions=False) as s:
        assert s.resumed and s.agent.config.model_spec == "mock/anthropic"
        assert [m.text for m in s.agent.conversation if m.role == "system"] == first
        path = s.store.path
    lines = [json.loads(x) for x in Path(path).read_text().splitlines()]
    systems = [e for e in lines if e.get("message", {}).get("role") == "system"]
    assert len(systems) == 1
    # a changed AGENTS.md: the change is recorded as a system replacement
    write(repo / "AGENTS.md", "RULES-V2")
    with open_session(cwd=repo, session="continue", extensions=False) as s:
        assert s.store.session_id == sid
        now = [m.text for m in s.agent.conversation if m.role == "system"]
        assert len(now) == 1 and "RULES-V2" in now[0] and "RULES-V1" not in now[0]
    lines = [json.loads(x) for x in Path(path).read_text().splitlines()]
    systems = [e for e in lines if e.get("message", {}).get("role") == "system"]
    assert len(systems) == 2 and systems[-1].get("system_mode") == "replace"
    with open_session(cwd=repo, session=("resume", sid), extensions=False) as s:
        assert [m.text for m in s.agent.conversation if m.role == "system"] == now


def test_continue_without_a_session_starts_a_new_one_and_says_so(repo: Path) -> None:
    notes: list[str] = []
    with open_session(
        cwd=repo, model="mock/anthropic", session="continue", extensions=False, notify=notes.append
    ) as s:
        assert not s.resumed
    assert notes == ["no earlier session in this directory; starting a new one"]


def test_bad_session_spec_and_unknown_model(repo: Path) -> None:
    with pytest.raises(ValueError, match="session must be"):
        open_agent(cwd=repo, session="newest", extensions=False)
    with pytest.raises(ConfigError, match="unknown provider"):
        open_agent(cwd=repo, model="nope/x", extensions=False)


def test_system_prompt_arguments(repo: Path) -> None:
    with open_session(
        cwd=repo,
        model="mock/anthropic",
        session=None,
        extensions=False,
        system_prompt="BASE",
        append_system_prompt="TAIL",
    ) as s:
        text = s.agent.conversation[0].text
    assert text.startswith("BASE\n\n") and text.endswith("TAIL") and "RULES-V1" in text


def test_cli_one_shot_loads_the_config_once(repo: Path) -> None:
    """Issue 11: one `panto -p hi --model mock/anthropic` calls Config.load once."""
    code = (
        "import sys\n"
        "from panto.config import Config\n"
        "orig = Config.load.__func__\n"
        "n = [0]\n"
        "def load(cls, *a, **k):\n"
        "    n[0] += 1\n"
        "    return orig(cls, *a, **k)\n"
        "Config.load = classmethod(load)\n"
        "from panto.cli import main\n"
        "rc = main(['-p', 'hi', '--model', 'mock/anthropic'])\n"
        "print('LOADS', n[0], file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert "You said: hi" in r.stdout
    assert "LOADS 1" in r.stderr, r.stderr

"""Agent.add_system_message(mode="replace") survives a reload: the session
file records the replacement instead of piling up system prompts."""

from __future__ import annotations

from pathlib import Path

from panto import Agent, Config
from panto.sessions import FSJSONLStore


def test_replace_is_persisted(tmp_path: Path) -> None:
    store = FSJSONLStore(tmp_path / "s", tmp_path)
    agent = Agent(Config(provider="mock", model="anthropic"), store=store)
    agent.add_system_message("first system prompt")
    agent.add_system_message("more", "append")
    agent.add_system_message("the only one now", "replace")
    agent.submit_user_message("hi")
    path = store.path
    agent.close()
    store.close()

    loaded = FSJSONLStore.open(path).load_conversation()
    systems = [m.text for m in loaded.conversation if m.role == "system"]
    assert systems == ["the only one now"]
    assert [m.text for m in agent.conversation if m.role == "system"] == systems
    assert loaded.dangling_user == "hi"


def test_clear_with_a_new_store_keeps_the_old_file(tmp_path: Path) -> None:
    old = FSJSONLStore(tmp_path / "s", tmp_path)
    agent = Agent(Config(provider="mock", model="anthropic"), store=old)
    agent.add_system_message("sys")
    agent.submit_user_message("before")
    new = FSJSONLStore(tmp_path / "s", tmp_path)
    agent.clear(store=new)
    agent.submit_user_message("after")
    old_path, new_path = old.path, new.path
    old.close()
    new.close()
    agent.close()
    before = FSJSONLStore.open(old_path).load_conversation()
    after = FSJSONLStore.open(new_path).load_conversation()
    assert before.dangling_user == "before"
    assert after.dangling_user == "after"
    assert [m.text for m in after.conversation] == ["sys"]

"""Agent.branch_from: an agent on any backend branches at an earlier prompt,
runs both branches, and each branch's next request is what a fresh agent
with that branch's conversation sends (byte for byte)."""

from __future__ import annotations

from support.sessions import Backend, drain

from panto.agent import Agent
from panto.config import Config
from panto.conversation import Conversation, Message, Text
from panto.testing import Reply, ScriptedServer


def _config(url: str) -> Config:
    return Config(
        provider="anthropic",
        model="test-model",
        base_url=url,
        api_key="sk-test-tree",
        system_prompt="You are panto.",
        max_retries=0,
    )


def test_agent_branches_at_an_earlier_prompt(backend: Backend, workdir: str) -> None:
    replies = [Reply([Text(t)]) for t in ("one", "two", "two again", "three", "x", "x")]
    with ScriptedServer(replies) as server:
        store = backend.backend.create(workdir)
        agent = Agent(_config(server.url), store=store)
        agent.submit_user_message("first")
        drain(agent)
        agent.submit_user_message("second")
        drain(agent)
        second_id = store.load_conversation().entry_ids[-2]
        loaded = agent.branch_from(second_id)
        assert loaded.dangling_user == "second"
        assert [m.text for m in agent.conversation if m.role != "system"] == ["first", "one"]
        agent.submit_user_message("second, edited")
        drain(agent)
        agent.submit_user_message("third")
        drain(agent)
        edited_branch = list(agent.conversation)
        sid = store.session_id
        agent.close()
        store.close()
        assert len(server.requests) == 4

        # resume: the edited branch is current; both leaves are there
        with backend.backend.open(sid) as again:
            assert list(again.load_conversation().conversation) == edited_branch
            leaves = again.leaves()
            assert len(leaves) == 2
            old = [x for x in leaves if x != again.leaf_id][0]
            old_conv = list(again.load_conversation(old).conversation)
            assert [m.text for m in old_conv if m.role != "system"] == [
                "first",
                "one",
                "second",
                "two",
            ]
            # continue the old branch: its request is that of a fresh agent
            # given the old branch's conversation
            resumed = Agent(_config(server.url), store=again)
            resumed.branch_from(old)
            resumed.submit_user_message("more")
            drain(resumed)
            fresh = Agent(
                _config(server.url), conversation=Conversation([*old_conv, Message.user("more")])
            )
            drain(fresh)
            assert server.requests[-2].body == server.requests[-1].body
            resumed.close()
            fresh.close()
    # no key in the store, whatever the backend
    assert "sk-test-tree" not in "".join(map(str, backend.backend.export(sid)))

"""The OpenAI Responses wire end to end against the loopback server: the
requests panto sends (``/v1/responses``, ``input`` items, ``store: false``,
``include``), a two-round tool loop that sends the reasoning item back
byte for byte before its function call, a session resumed with it, and the
built-in ``openai`` provider's wire choice."""

from __future__ import annotations

import dataclasses
import json

from support.agent import TEST_KEY, make_config, run_turn

from panto.agent import Agent
from panto.config import BUILTIN_PROVIDERS, Config
from panto.conversation import Message, Text, Thinking, ToolUse, Usage
from panto.events import MessageComplete
from panto.testing import Reply, ScriptedServer
from panto.tools import FunctionTool

WIRE = "openai-responses"
ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}
# A reasoning item as the API sends it.  The \u00e9 escape and the member
# order would not survive a parse and re-serialization: the request must
# carry these exact bytes.
REASONING = (
    '{"id":"rs_68af40aa01","type":"reasoning","summary":[{"type":"summary_text",'
    '"text":"Adding for the caf\\u00e9."}],"encrypted_content":"gAAAAABoqUCq-enc/ry+pted=="}'
)


def responses_config(server: ScriptedServer, **kw) -> Config:
    """The built-in ``openai`` provider pointed at the loopback server with
    ``wire = "openai-responses"`` (as a config file's [providers.openai]
    would: an explicit wire holds for any base URL)."""
    openai = dataclasses.replace(BUILTIN_PROVIDERS["openai"], wire=WIRE, compat_wire="")
    providers = {**BUILTIN_PROVIDERS, "openai": openai}
    return make_config(
        server, "openai-chat", base_url=server.base_url(WIRE), providers=providers, **kw
    )


def add_tool() -> FunctionTool:
    return FunctionTool("add", "Add two numbers", lambda i: i["a"] + i["b"], ADD_SCHEMA)


def test_two_round_tool_loop_sends_the_reasoning_item_back_as_received():
    with ScriptedServer() as server:
        server.push(
            Reply(
                [
                    Thinking("Adding for the café.", REASONING),
                    ToolUse("call_abc", "add", {"a": 2, "b": 3}),
                ],
                usage=Usage(100, output_tokens=30, cache_read_tokens=64, reasoning_tokens=20),
            ),
            Reply([Text("It is 5.")], usage=Usage(150, output_tokens=5)),
        )
        with Agent(responses_config(server)) as agent:
            agent.register_tool(add_tool())
            agent.submit_user_message("what is 2+3?")
            events = run_turn(agent)
            conversation = list(agent.conversation)

        assert [r.path for r in server.requests] == ["/v1/responses", "/v1/responses"]
        first, second = server.requests
        assert first.headers["authorization"] == f"Bearer {TEST_KEY}"
        tools = [
            {
                "type": "function",
                "name": "add",
                "description": "Add two numbers",
                "parameters": ADD_SCHEMA,
                "strict": False,
            }
        ]
        assert first.json == {
            "model": "test-model",
            "input": [{"role": "user", "content": "what is 2+3?"}],
            "tools": tools,
            "max_output_tokens": 1000,
            "stream": True,
            "store": False,
            "include": ["reasoning.encrypted_content"],
        }
        # the reasoning item exactly as received, then the call, then its output
        assert REASONING.encode() in second.body
        assert second.json["input"] == [
            {"role": "user", "content": "what is 2+3?"},
            json.loads(REASONING),
            {
                "type": "function_call",
                "call_id": "call_abc",
                "name": "add",
                "arguments": '{"a":2,"b":3}',
            },
            {"type": "function_call_output", "call_id": "call_abc", "output": "5"},
        ]
        body = second.body.decode()
        assert body.index(REASONING) < body.index('"type":"function_call"')

    # the turn: thinking (the summary, the item as signature), the call, usage
    first_msg = conversation[1]
    assert first_msg.content[0] == Thinking("Adding for the café.", REASONING)
    assert first_msg.stop_reason == "tool_use"
    assert first_msg.usage == Usage(
        100, output_tokens=30, cache_read_tokens=64, reasoning_tokens=20
    )
    final = [e for e in events if isinstance(e, MessageComplete)][-1]
    assert final.message.text == "It is 5."


def test_a_stored_turn_resumes_byte_identically():
    """Sessions store messages as Message.to_dict JSON: the reasoning item
    comes back from it unchanged and goes out unchanged."""
    msg = Message(
        "assistant",
        (Thinking("Adding for the café.", REASONING), ToolUse("call_abc", "add", {"a": 2})),
        None,
        "tool_use",
        "openai",
        "gpt-5",
    )
    stored = json.dumps(msg.to_dict(), ensure_ascii=False)
    resumed = Message.from_dict(json.loads(stored))
    assert resumed == msg and resumed.content[0].signature == REASONING
    with ScriptedServer() as server:
        from panto.providers import make_provider

        provider = make_provider(responses_config(server))
        req = provider.build_request([Message.user("add"), resumed], [])
    assert REASONING.encode() in req.body


def test_length_stop_and_failed_response():
    with ScriptedServer() as server:
        server.push(
            Reply([Text("Once upon a")], stop_reason="length"),
            Reply(
                [Text("Partial answer")],
                error={
                    "type": "response.failed",
                    "code": "server_error",
                    "message": "model crashed",
                },
                error_after=3,
            ),
        )
        cfg = responses_config(server, max_retries=0)
        with Agent(cfg) as agent:
            agent.submit_user_message("story")
            events = run_turn(agent)
            final = [e for e in events if isinstance(e, MessageComplete)][-1]
            assert final.stop_reason == "length"
            assert final.message.text == "Once upon a"
            agent.submit_user_message("again")
            try:
                run_turn(agent)
                raised = None
            except Exception as e:  # the provider error of response.failed
                raised = e
        assert raised is not None and "model crashed" in str(raised)


def test_the_builtin_openai_provider_speaks_responses_to_openai_only(tmp_path):
    own = Config(provider="openai", model="gpt-5", api_key="k")
    assert own.wire == WIRE
    # pointed at an OpenAI-compatible server: chat completions
    compat = Config(provider="openai", model="m", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert compat.wire == "openai-chat"
    # a configured wire holds whatever the URL; a base_url alone is a compatible server
    user = tmp_path / "config.toml"
    user.write_text(
        '[providers.openai]\nbase_url = "http://127.0.0.1:9/v1"\nwire = "openai-responses"\n'
    )
    assert Config.load(env={}, cwd=tmp_path, user_file=user, provider="openai").wire == WIRE
    user.write_text('[providers.openai]\nbase_url = "http://127.0.0.1:9/v1"\n')
    assert (
        Config.load(env={}, cwd=tmp_path, user_file=user, provider="openai").wire == "openai-chat"
    )


def test_other_wires_do_not_get_the_responses_items():
    """A session moved from the Responses wire to Anthropic's or the chat
    wire: the reasoning item (a thinking block's signature) and a built-in
    tool call item are not sent there; the text and the tool call are."""
    from panto.conversation import ServerBlock
    from panto.providers import make_provider

    ws = '{"id":"ws_1","type":"web_search_call","status":"completed"}'
    turn = Message(
        "assistant",
        (
            Thinking("Adding for the café.", REASONING),
            ServerBlock(ws),
            Text("Let me add."),
            ToolUse("call_abc", "add", {"a": 2}),
        ),
        None,
        "tool_use",
        "openai",
        "gpt-5",
    )
    convo = [Message.user("add"), turn]
    kw = {"model": "m", "base_url": "http://127.0.0.1:9", "api_key": "k", "cache_enabled": False}
    anthropic = json.loads(
        make_provider(Config(provider="anthropic", **kw)).build_request(convo, []).body
    )
    assert anthropic["messages"][1]["content"] == [
        {"type": "text", "text": "Let me add."},
        {"type": "tool_use", "id": "call_abc", "name": "add", "input": {"a": 2}},
    ]
    chat = json.loads(make_provider(Config(provider="openai", **kw)).build_request(convo, []).body)
    assert chat["messages"][1]["content"] == "Let me add."
    assert (
        b"encrypted_content"
        not in make_provider(Config(provider="openai", **kw)).build_request(convo, []).body
    )

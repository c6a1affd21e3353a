"""The proxy routes of ``panto serve`` with the official ``openai`` and
``anthropic`` SDKs as clients, against real loopback upstreams of both
wires: same wire and across wires, streamed and not."""

from __future__ import annotations

import json

import anthropic
import httpx
import openai
import pytest
from support.serve import UPSTREAM_KEY, Served

from panto.conversation import Text, Thinking, ToolUse, Usage
from panto.testing import HTTPError, Reply


def oa(s: Served) -> openai.OpenAI:
    return openai.OpenAI(base_url=s.url + "/v1", api_key="client-key", max_retries=0)


def an(s: Served) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=s.url, api_key="client-key", max_retries=0)


USAGE = Usage(input_tokens=11, output_tokens=7, cache_read_tokens=100, cache_write_tokens=20)


@pytest.mark.parametrize("model", ["fast", "smart"])  # same wire, then Anthropic upstream
def test_openai_client_text_streamed_and_not(served: Served, model: str) -> None:
    up = served.openai_up if model == "fast" else served.anthropic_up
    up.push(
        Reply([Text("Hello there, friend.")], usage=USAGE), Reply([Text("Second.")], usage=USAGE)
    )
    client = oa(served)
    chunks = list(
        client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello there, friend."
    assert [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ] == ["stop"]
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    # prompt_tokens = input + cache read + cache write (the OpenAI wire has no cache write)
    prompt = 11 + 100 + (20 if model == "smart" else 0)
    assert last.usage.prompt_tokens == prompt
    assert last.usage.completion_tokens == 7
    assert last.usage.prompt_tokens_details.cached_tokens == 100
    r = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "again"}])
    assert r.choices[0].message.content == "Second."
    assert r.usage.prompt_tokens == prompt
    sent = up.requests[0]
    assert sent.json["model"] == ("gpt-up" if model == "fast" else "claude-up")
    assert sent.headers.get("authorization", sent.headers.get("x-api-key", "")).endswith(
        UPSTREAM_KEY
    )


@pytest.mark.parametrize("model", ["smart", "fast"])
def test_anthropic_client_tools_streamed(served: Served, model: str) -> None:
    up = served.anthropic_up if model == "smart" else served.openai_up
    up.push(
        Reply(
            [
                Text("Let me look."),
                ToolUse("call_1", "get_weather", {"city": "Paris", "unit": "c"}),
                ToolUse("call_2", "get_time", {}),
            ],
            usage=USAGE,
        )
    )
    tools = [
        {
            "name": "get_weather",
            "description": "w",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
            },
        },
        {
            "name": "get_time",
            "description": "t",
            "input_schema": {"type": "object", "properties": {}},
        },
    ]
    with an(served).messages.stream(
        model=model, max_tokens=100, messages=[{"role": "user", "content": "weather?"}], tools=tools
    ) as stream:
        msg = stream.get_final_message()
    assert msg.stop_reason == "tool_use"
    kinds = [b.type for b in msg.content]
    assert kinds == ["text", "tool_use", "tool_use"]
    assert msg.content[0].text == "Let me look."
    assert (msg.content[1].id, msg.content[1].name, msg.content[1].input) == (
        "call_1",
        "get_weather",
        {"city": "Paris", "unit": "c"},
    )
    assert (msg.content[2].name, msg.content[2].input) == ("get_time", {})
    assert msg.usage.output_tokens == 7
    if model == "fast":  # cross wire: the OpenAI upstream got function tools and a max_tokens
        body = up.requests[0].json
        assert [t["function"]["name"] for t in body["tools"]] == ["get_weather", "get_time"]


def test_openai_client_thinking_round_trip_to_anthropic(served: Served) -> None:
    """Thinking reaches the OpenAI client as reasoning_content; on turn 2 the
    Anthropic upstream gets the signed thinking block back before tool_use."""
    up = served.anthropic_up
    up.push(
        Reply(
            [
                Thinking("I should check the weather.", "SIG-abc123"),
                ToolUse("toolu_9", "get_weather", {"city": "Oslo"}),
            ]
        ),
        Reply([Text("It is cold.")]),
    )
    client = oa(served)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    chunks = list(
        client.chat.completions.create(
            model="smart",
            messages=[{"role": "user", "content": "weather in Oslo?"}],
            tools=tools,
            stream=True,
        )
    )
    reasoning = "".join(
        getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks if c.choices
    )
    assert reasoning == "I should check the weather."
    calls = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert calls[0].id == "toolu_9" and calls[0].function.name == "get_weather"
    args = "".join(tc.function.arguments or "" for tc in calls)
    assert json.loads(args) == {"city": "Oslo"}
    r = client.chat.completions.create(
        model="smart",
        tools=tools,
        messages=[
            {"role": "user", "content": "weather in Oslo?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "toolu_9",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": args},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "toolu_9", "content": "-5 C"},
        ],
    )
    assert r.choices[0].message.content == "It is cold."
    second = up.requests[1].json
    assistant = [m for m in second["messages"] if m["role"] == "assistant"][0]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "I should check the weather.",
        "signature": "SIG-abc123",
    }
    assert (
        assistant["content"][1]["type"] == "tool_use" and assistant["content"][1]["id"] == "toolu_9"
    )


def test_errors_before_the_first_byte_keep_status_and_retry_after(served: Served) -> None:
    served.openai_up.push(
        HTTPError(
            429,
            {"error": {"message": "slow down", "type": "rate_limit_error"}},
            {"Retry-After": "7"},
        )
    )
    with pytest.raises(openai.RateLimitError) as e:
        oa(served).chat.completions.create(
            model="fast", messages=[{"role": "user", "content": "x"}]
        )
    assert e.value.response.headers["retry-after"] == "7"
    assert "slow down" in str(e.value)
    served.openai_up.push(
        HTTPError(
            429,
            {"error": {"message": "slow down", "type": "rate_limit_error"}},
            {"Retry-After": "7"},
        )
    )
    with pytest.raises(anthropic.RateLimitError) as e2:
        an(served).messages.create(
            model="fast", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        )
    assert e2.value.response.headers["retry-after"] == "7"


def test_in_band_overload_after_text_raises_in_both_sdks(served: Served) -> None:
    for _ in range(2):
        served.anthropic_up.push(
            Reply(
                [Text("partial answer here")],
                error={"type": "overloaded_error", "message": "Overloaded"},
                error_after=4,
            )
        )
    with pytest.raises(anthropic.APIStatusError) as e:
        with an(served).messages.stream(
            model="smart", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        ) as s:
            s.get_final_message()
    assert "Overloaded" in str(e.value)
    with pytest.raises(openai.APIError) as e2:
        list(
            oa(served).chat.completions.create(
                model="smart", messages=[{"role": "user", "content": "x"}], stream=True
            )
        )
    assert "Overloaded" in str(e2.value)


def test_cut_upstream_is_an_error_never_a_clean_end(served: Served) -> None:
    served.openai_up.push(Reply([Text("a long answer " * 20)], disconnect_after=6))
    raw = httpx.post(
        served.url + "/v1/chat/completions",
        json={"model": "fast", "messages": [{"role": "user", "content": "x"}], "stream": True},
        timeout=30,
    ).text
    assert '"error"' in raw and "[DONE]" not in raw
    served.openai_up.push(Reply([Text("a long answer " * 20)], disconnect_after=6))
    with pytest.raises(anthropic.APIStatusError):
        with an(served).messages.stream(
            model="fast", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        ) as s:
            s.get_final_message()


def test_cut_upstream_on_a_non_streamed_request_is_a_502_naming_it(served: Served) -> None:
    """The proxy assembles a non-streamed answer from the upstream's stream;
    a cut there is the client's 502 naming the upstream (it was a bare 500,
    the transport's exception escaping the proxy), and no traceback."""
    served.openai_up.push(Reply([Text("a long answer " * 20)], disconnect_after=6))
    with pytest.raises(openai.InternalServerError) as e:
        oa(served).chat.completions.create(
            model="fast", messages=[{"role": "user", "content": "x"}]
        )
    assert e.value.status_code == 502
    assert "upstream up-o/gpt-up: " in str(e.value), str(e.value)
    assert "Traceback" not in served.log()


def test_fallback_before_the_first_byte_only(served: Served) -> None:
    served.openai_up.push(HTTPError(529, {"error": {"message": "overloaded"}}))
    served.anthropic_up.push(Reply([Text("from the backup")]))
    r = oa(served).chat.completions.with_raw_response.create(
        model="backed", messages=[{"role": "user", "content": "x"}]
    )
    assert r.headers["x-panto-upstream"] == "up-a/backup"
    assert r.parse().choices[0].message.content == "from the backup"
    # failing after the first byte: an in-band error, the backup never called
    n = len(served.anthropic_up.requests)
    served.openai_up.push(Reply([Text("partial " * 30)], disconnect_after=5))
    raw = httpx.post(
        served.url + "/v1/chat/completions",
        json={"model": "backed", "messages": [{"role": "user", "content": "x"}], "stream": True},
        timeout=30,
    ).text
    assert '"error"' in raw and "[DONE]" not in raw
    assert len(served.anthropic_up.requests) == n


def test_models_list_on_both_sdks_and_no_key_leaks(served: Served) -> None:
    ids = [m.id for m in oa(served).models.list()]
    assert {"smart", "fast", "backed", "up-a/claude-up", "up-o/gpt-up"} <= set(ids)
    aids = [m.id for m in an(served).models.list()]
    assert set(aids) == set(ids)
    # the built-in providers have no key here (isolated_home clears them): a
    # client could not use them, so they are not offered; the mock needs none
    assert not [m for m in ids if m.startswith(("openai/", "anthropic/"))], ids
    assert any(m.startswith("mock/") for m in ids), ids
    served.openai_up.push(HTTPError(401, {"error": {"message": f"bad key {UPSTREAM_KEY}"}}))
    with pytest.raises(openai.AuthenticationError) as e:
        oa(served).chat.completions.create(
            model="fast", messages=[{"role": "user", "content": "x"}]
        )
    assert UPSTREAM_KEY not in str(e.value) and UPSTREAM_KEY not in e.value.response.text
    assert UPSTREAM_KEY not in served.log()


def test_upstream_key_echoed_in_an_in_band_error_is_scrubbed(served: Served) -> None:
    for up in (served.anthropic_up, served.openai_up):
        up.push(
            Reply(
                [Text("partial")],
                error={"type": "api_error", "message": f"key {UPSTREAM_KEY} bad"},
                error_after=3,
            )
        )
    for model in ("smart", "fast"):  # same wire (bytes passed through) and cross wire
        raw = httpx.post(
            served.url + "/v1/messages",
            json={
                "model": model,
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "x"}],
                "stream": True,
            },
            timeout=30,
        ).text
        assert "event: error" in raw and UPSTREAM_KEY not in raw, raw


def test_count_tokens_and_health(served: Served) -> None:
    short = {"model": "fast", "messages": [{"role": "user", "content": "hi"}]}
    long = {"model": "fast", "messages": [{"role": "user", "content": "hi " * 500}]}
    a = httpx.post(served.url + "/v1/messages/count_tokens", json=short).json()["input_tokens"]
    b = httpx.post(served.url + "/v1/messages/count_tokens", json=long).json()["input_tokens"]
    assert 0 < a < b
    assert httpx.get(served.url + "/health/liveliness").status_code == 200
    assert httpx.get(served.url + "/health/readiness").status_code == 200
    doc = httpx.get(served.url + "/openapi.json").json()
    assert {
        "/v1/chat/completions",
        "/v1/messages",
        "/v1/models",
        "/v1/messages/count_tokens",
    } <= set(doc["paths"])


def test_images_cross_the_wires(served: Served) -> None:
    import base64

    png = base64.b64encode(
        bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")
    ).decode()
    served.anthropic_up.push(Reply([Text("a red dot")]))
    oa(served).chat.completions.create(
        model="smart",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what?"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
                ],
            }
        ],
    )
    user = served.anthropic_up.requests[0].json["messages"][0]["content"]
    img = [b for b in user if b["type"] == "image"][0]
    assert img["source"] == {"type": "base64", "media_type": "image/png", "data": png}


@pytest.mark.parametrize(
    ("stop", "oa_finish", "an_stop"),
    [
        ("stop", "stop", "end_turn"),
        ("length", "length", "max_tokens"),
        ("tool_use", "tool_calls", "tool_use"),
        ("refusal", "content_filter", "refusal"),
    ],
)
def test_stop_reason_table_across_wires(
    served: Served, stop: str, oa_finish: str, an_stop: str
) -> None:
    blocks = [ToolUse("c1", "f", {})] if stop == "tool_use" else [Text("x")]
    served.anthropic_up.push(Reply(blocks, stop_reason=stop))
    tools = [
        {
            "type": "function",
            "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
        }
    ]
    r = oa(served).chat.completions.create(
        model="smart", messages=[{"role": "user", "content": "x"}], tools=tools
    )
    assert r.choices[0].finish_reason == oa_finish
    served.openai_up.push(Reply(blocks, stop_reason=stop))
    m = an(served).messages.create(
        model="fast",
        max_tokens=10,
        messages=[{"role": "user", "content": "x"}],
        tools=[{"name": "f", "input_schema": {"type": "object", "properties": {}}}],
    )
    assert m.stop_reason == an_stop


def test_openai_client_parallel_and_no_argument_tools_from_anthropic(served: Served) -> None:
    served.anthropic_up.push(
        Reply(
            [
                ToolUse("t1", "a", {"x": 1}),
                ToolUse("t2", "b", {}),
                ToolUse("t3", "a", {"x": [1, 2, {"y": "z"}]}),
            ],
            chunk=3,
        )
    )
    tools = [
        {
            "type": "function",
            "function": {"name": n, "parameters": {"type": "object", "properties": {}}},
        }
        for n in ("a", "b")
    ]
    r = oa(served).chat.completions.create(
        model="smart", messages=[{"role": "user", "content": "x"}], tools=tools
    )
    calls = r.choices[0].message.tool_calls
    assert [(c.id, c.function.name, json.loads(c.function.arguments or "{}")) for c in calls] == [
        ("t1", "a", {"x": 1}),
        ("t2", "b", {}),
        ("t3", "a", {"x": [1, 2, {"y": "z"}]}),
    ]


def test_client_disconnect_closes_the_upstream(served: Served) -> None:
    import time

    served.openai_up.push(Reply([Text("word " * 400)], delay=0.05))
    with httpx.stream(
        "POST",
        served.url + "/v1/chat/completions",
        json={"model": "fast", "messages": [{"role": "user", "content": "x"}], "stream": True},
        timeout=30,
    ) as r:
        it = r.iter_raw()
        next(it)
        next(it)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 5:
        ready = httpx.get(served.url + "/health/readiness").json()
        if ready["inflight"] == 0:
            break
        time.sleep(0.05)
    assert ready["inflight"] == 0
    assert time.monotonic() - t0 < 1.5


def test_usage_ledger_row(served: Served) -> None:
    import os
    import time
    from pathlib import Path

    served.anthropic_up.push(Reply([Text("ok")], usage=USAGE))
    oa(served).chat.completions.create(model="smart", messages=[{"role": "user", "content": "x"}])
    path = Path(os.environ["XDG_DATA_HOME"]) / "panto" / "serve" / "usage.jsonl"
    deadline = time.monotonic() + 5
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert (path.stat().st_mode & 0o777) == 0o600
    row = rows[-1]
    assert (row["alias"], row["upstream"], row["status"]) == ("smart", "up-a/claude-up", "ok")
    assert (
        row["input_tokens"],
        row["output_tokens"],
        row["cache_read_tokens"],
        row["cache_write_tokens"],
    ) == (11, 7, 100, 20)


def test_a_request_without_a_model_says_it_is_missing(served: Served) -> None:
    for route, body in (
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}]}),
        ("/v1/messages", {"max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}),
    ):
        r = httpx.post(served.url + route, json=body)
        assert r.status_code == 400
        assert r.json()["error"]["message"] == "body.model: missing (a str is required)"


def test_a_provider_without_a_key_tells_the_client_the_server_lacks_it(served: Served) -> None:
    with pytest.raises(openai.InternalServerError) as e:
        oa(served).chat.completions.create(
            model="anthropic/claude-sonnet-4-5", messages=[{"role": "user", "content": "x"}]
        )
    assert e.value.status_code == 500  # the server's set-up: not a model that does not exist
    msg = str(e.value)
    assert "panto serve has no API key for provider 'anthropic'" in msg
    assert "set ANTHROPIC_API_KEY in panto serve's environment" in msg and "restart" in msg
    with pytest.raises(anthropic.InternalServerError) as e2:
        an(served).messages.create(
            model="openai/gpt-4.1", max_tokens=5, messages=[{"role": "user", "content": "x"}]
        )
    assert e2.value.status_code == 500
    assert "set OPENAI_API_KEY in panto serve's environment" in str(e2.value)
    # a provider that does not exist is the client's mistake: still a 404
    with pytest.raises(openai.NotFoundError, match="unknown provider 'nosuch'"):
        oa(served).chat.completions.create(
            model="nosuch/m", messages=[{"role": "user", "content": "x"}]
        )
    assert "client-key" not in served.log()


def test_a_base_url_with_or_without_v1_by_mistake_says_which(served: Served) -> None:
    """The usual slip: an OpenAI client without /v1, an Anthropic client
    with it.  Both SDKs raise NotFoundError naming the route to use."""
    with pytest.raises(openai.NotFoundError) as e:
        openai.OpenAI(base_url=served.url, api_key="k", max_retries=0).chat.completions.create(
            model="fast", messages=[{"role": "user", "content": "x"}]
        )
    assert "did you mean /v1/chat/completions? (an OpenAI client's base_url ends in /v1)" in str(
        e.value
    )
    with pytest.raises(anthropic.NotFoundError) as e2:
        anthropic.Anthropic(
            base_url=served.url + "/v1", api_key="k", max_retries=0
        ).messages.create(model="smart", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert "did you mean /v1/messages? (an Anthropic client's base_url has no /v1)" in str(e2.value)
    r = httpx.get(served.url + "/v1/messages")
    assert r.status_code == 405
    assert r.json()["error"]["message"] == (
        "GET /v1/messages: this route does not take GET (see GET /openapi.json)"
    )
    r = httpx.get(served.url + "/nope")
    assert r.status_code == 404 and "GET /openapi.json" in r.json()["error"]["message"]
    assert not served.anthropic_up.requests and not served.openai_up.requests


def test_tools_and_stop_of_the_wrong_type_are_400s(served: Served) -> None:
    """They were 500s with a traceback in the log (``tools: 5`` in the
    parser, ``stop: 5`` when carried across wires)."""
    msgs = [{"role": "user", "content": "x"}]
    for route, body, message in (
        (
            "/v1/chat/completions",
            {"model": "smart", "messages": msgs, "tools": 5},
            "body.tools: expected an array of tools, got int",
        ),
        (
            "/v1/messages",
            {"model": "fast", "max_tokens": 5, "messages": msgs, "tools": {"a": 1}},
            "body.tools: expected an array of tools, got dict",
        ),
        (
            "/v1/chat/completions",
            {"model": "smart", "messages": msgs, "stop": 5},
            "body.stop: expected a string or an array of strings",
        ),
    ):
        r = httpx.post(served.url + route, json=body)
        assert r.status_code == 400, r.text
        assert r.json()["error"]["message"] == message
    assert "Traceback" not in served.log()

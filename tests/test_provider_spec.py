"""Providers built from a ``ProviderSpec`` (wire, base URL, key, model
options), without a layered ``Config``, write the golden request bodies, and
a spec resolved from a config gives the same requests as the config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from panto.config import Config
from panto.conversation import Message
from panto.providers import ProviderSpec, make_provider
from panto.tools import ToolDecl

GOLDEN = Path(__file__).resolve().parent / "golden" / "requests"
CASES = sorted(GOLDEN.glob("*.json"))
MAX_TOKENS_FIELD = {"openai-chat": "max_completion_tokens"}


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat", "openai-responses"])
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_a_spec_without_config_writes_the_golden_body(path: Path, wire: str) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    if wire not in case["bodies"]:
        pytest.skip(f"{path.stem} is about another wire")
    spec = ProviderSpec(
        wire=wire,
        base_url="http://127.0.0.1:9",
        model=case["model"],
        api_key="sk-golden",
        max_tokens=case["max_tokens"],
        max_tokens_field=MAX_TOKENS_FIELD.get(wire, "max_tokens"),
        cache_enabled=False,
    )
    provider = make_provider(spec)
    messages = [Message.from_dict(m) for m in case["messages"]]
    tools = [ToolDecl(t["name"], t["description"], t["schema"]) for t in case["tools"]]
    req = provider.build_request(messages, tools)
    assert json.loads(req.body) == case["bodies"][wire]
    assert req.secrets == ("sk-golden",)


def test_a_spec_from_a_config_sends_what_the_config_does() -> None:
    config = Config(
        provider="openai", model="gpt-x", base_url="http://127.0.0.1:9/v1", api_key="sk-1234567"
    )
    messages = [Message.user("hi")]
    a = make_provider(config).build_request(messages, [])
    b = make_provider(ProviderSpec.from_config(config)).build_request(messages, [])
    assert (a.url, a.headers, a.body) == (b.url, b.headers, b.body)
    assert json.loads(a.body)["prompt_cache_key"].startswith("panto-")  # OpenAI's own API


def test_an_unknown_wire_is_one_clear_error() -> None:
    from panto.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown wire 'smoke-signals'"):
        make_provider(ProviderSpec(wire="smoke-signals", base_url="http://x", model="m"))

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


def test_sessions_with_one_spec_share_a_provider_while_one_holds_it() -> None:
    """A plain provider is its spec: turns and sessions with the same spec
    share one (each turn built its own: a tenth of its start at 256 turns),
    another key or model is another provider, and a shared one goes with
    the last holder (its key then leaves the redaction set, as before)."""
    import gc

    from panto.agent import Agent
    from panto.providers.transport import redact

    def config(key: str, model: str = "gpt-x") -> Config:
        return Config(provider="openai", model=model, base_url="http://127.0.0.1:9/v1", api_key=key)

    key = "sk-shared-spec-0123456789"
    a, b = Agent(config(key)), Agent(config(key))
    pa, pb = a._open_turn().provider, b._open_turn().provider  # noqa: SLF001 - what a turn uses
    assert pa is pb
    assert make_provider(config(key)) is pa
    assert make_provider(config("sk-other-spec-0123456789")) is not pa
    assert make_provider(config(key, "gpt-y")) is not pa
    assert redact(f"x {key}") == "x ***"
    del pa, pb, a, b
    gc.collect()
    assert redact(f"x {key}") == f"x {key}"


def test_a_specs_key_holds_every_field() -> None:
    """Specs that differ in any field are not interchangeable: the key that
    shares providers must see every field (a field added to the spec and not
    to its key fails here)."""
    import dataclasses

    base = ProviderSpec(wire="openai-chat", base_url="http://127.0.0.1:9/v1", model="m")
    other: dict[str, object] = {
        "wire": "anthropic-messages",
        "base_url": "http://127.0.0.1:8/v1",
        "model": "n",
        "api_key": "sk-1234567",
        "headers": {"x-extra": "1"},
        "max_tokens": 7,
        "max_tokens_field": "max_completion_tokens",
        "thinking_budget": 1024,
        "reasoning_effort": "high",
        "cache_enabled": not base.cache_enabled,
        "cache_ttl": "1h",
        "prompt_cache_key": not base.prompt_cache_key,
        "images": not base.images,
    }
    names = {f.name for f in dataclasses.fields(ProviderSpec)}
    assert names == set(other), "a new ProviderSpec field: add it here and to ProviderSpec.key()"
    for name, value in other.items():
        changed = dataclasses.replace(base, **{name: value})
        assert changed.key() != base.key(), name
    assert dataclasses.replace(base).key() == base.key()

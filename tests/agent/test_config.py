"""Config: provider table, provider/model names, env overlay, key handling."""

from __future__ import annotations

import pytest

from panto.config import Config
from panto.errors import ConfigError


def test_builtin_providers_and_urls():
    from panto.providers import make_provider

    a = make_provider(Config(model="anthropic/claude-x", api_key="k"))
    assert a.url == "https://api.anthropic.com/v1/messages"
    o = make_provider(Config(model="openai/gpt-x", api_key="k"))
    # OpenAI's own API: the Responses API (issue 27)
    assert o.url == "https://api.openai.com/v1/responses"
    ol = make_provider(Config(model="ollama/qwen3"))
    assert ol.url == "http://127.0.0.1:11434/v1/chat/completions"
    assert ol.api_key is None
    # pointed at an OpenAI-compatible server: chat completions
    custom = make_provider(Config(model="openai/x", api_key="k", base_url="http://h:1/v1/"))
    assert custom.url == "http://h:1/v1/chat/completions"


def test_model_names():
    c = Config(model="anthropic/claude-sonnet-4-5")
    assert (c.provider, c.model, c.wire) == ("anthropic", "claude-sonnet-4-5", "anthropic-messages")
    assert Config(provider="openai").model == "gpt-4.1"
    assert Config(model="mock/openai").wire == "openai-chat"
    assert Config(model="mock/anything").wire == "anthropic-messages"
    c2 = c.with_model("openai/gpt-4o")
    assert c2.model_spec == "openai/gpt-4o" and c.model_spec == "anthropic/claude-sonnet-4-5"
    with pytest.raises(ConfigError, match="unknown provider"):
        c.with_model("bogus/x")
    with pytest.raises(ConfigError, match="unknown provider"):
        Config(provider="bogus")


def test_load_from_env():
    c = Config.load(
        env={"PANTO_MODEL": "openai/gpt-x", "PANTO_MAX_TOKENS": "77", "PANTO_READ_TIMEOUT": "1.5"}
    )
    assert (c.provider, c.model, c.max_tokens, c.read_timeout) == ("openai", "gpt-x", 77, 1.5)
    assert Config.load(env={"ANTHROPIC_API_KEY": "x"}).provider == "anthropic"
    assert Config.load(env={"OPENAI_API_KEY": "x"}).provider == "openai"
    assert Config.load(env={}).provider == "mock"
    with pytest.raises(ConfigError, match="PANTO_MAX_TOKENS"):
        Config.load(env={"PANTO_MAX_TOKENS": "many"})
    assert Config.load(env={}, model="anthropic/y").model_spec == "anthropic/y"


def test_keys():
    c = Config(model="anthropic/x", api_key="sk-secret-value")
    assert "sk-secret-value" not in repr(c)
    assert c.resolve_api_key() == "sk-secret-value"
    c = Config(model="openai/x")
    assert c.resolve_api_key({"OPENAI_API_KEY": "from-env"}) == "from-env"
    with pytest.raises(ConfigError, match="OPENAI_API_KEY") as info:
        c.resolve_api_key({})
    assert "from-env" not in str(info.value)

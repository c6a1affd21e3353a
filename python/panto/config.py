"""Configuration: which provider and model, limits, timeouts and retries.

A plain dataclass for now.  ``Config.load()`` gives the defaults overlaid with
the environment (``PANTO_MODEL``, ``PANTO_BASE_URL``, ...); TOML layering
comes later and will produce the same object.

Models are named ``provider/model`` (``anthropic/claude-sonnet-4-5``,
``openai/gpt-4.1``, ``ollama/qwen3``, ``mock/anthropic``).  A provider is an
entry of ``Config.providers``: a wire, a base URL, where its key comes from,
extra headers and a default model.  API keys are never part of ``repr()``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigError

__all__ = ["BUILTIN_PROVIDERS", "WIRES", "Config", "ProviderConfig", "split_model"]

#: The provider wires panto speaks (request serialization + stream decoding).
WIRES = ("openai-chat", "anthropic-messages")


@dataclass(frozen=True)
class ProviderConfig:
    """One provider.  ``wire`` is ``openai-chat`` or ``anthropic-messages``;
    OpenAI-style base URLs include ``/v1``, Anthropic's do not.

    ``max_tokens_field`` is the request key that carries the output limit for
    ``openai-chat``: ``max_completion_tokens`` for api.openai.com (its newer
    models reject ``max_tokens``), ``max_tokens`` for compatible servers (vLLM,
    Ollama, llama.cpp, DeepSeek) which all accept it.
    """

    name: str
    wire: str
    base_url: str
    api_key_env: str | None = None
    api_key: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict)
    default_model: str = ""
    requires_key: bool = True
    max_tokens_field: str = "max_tokens"
    mock: bool = False  # served by panto.testing in-process (offline)


BUILTIN_PROVIDERS: dict[str, ProviderConfig] = {
    "openai": ProviderConfig(
        "openai",
        "openai-chat",
        "https://api.openai.com/v1",
        api_key_env="OPENAI_API_KEY",
        default_model="gpt-4.1",
        max_tokens_field="max_completion_tokens",
    ),
    "anthropic": ProviderConfig(
        "anthropic",
        "anthropic-messages",
        "https://api.anthropic.com",
        api_key_env="ANTHROPIC_API_KEY",
        default_model="claude-sonnet-4-5",
    ),
    "ollama": ProviderConfig(
        "ollama",
        "openai-chat",
        "http://127.0.0.1:11434/v1",
        requires_key=False,
        default_model="qwen3",
    ),
    "mock": ProviderConfig(
        "mock",
        "anthropic-messages",
        "",
        requires_key=False,
        default_model="anthropic",
        mock=True,
    ),
}


def split_model(spec: str) -> tuple[str, str]:
    """``"anthropic/claude-x"`` -> ``("anthropic", "claude-x")``; a bare
    ``"openai"`` (a provider name) -> ``("openai", "")``."""
    spec = spec.strip()
    if not spec:
        raise ConfigError("empty model name: expected provider/model")
    provider, sep, model = spec.partition("/")
    if not sep:
        return provider, ""
    return provider, model


@dataclass
class Config:
    """Everything an ``Agent`` needs.  Construct directly, e.g.
    ``Config(provider="anthropic", model="claude-sonnet-4-5")`` or
    ``Config(model="openai/gpt-4.1")``, or use ``Config.load()``."""

    provider: str = "mock"
    model: str = ""
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    headers: dict[str, str] = field(default_factory=dict)
    max_tokens: int = 8192
    #: Anthropic extended thinking: ``thinking: {type: enabled, budget_tokens}``.
    thinking_budget: int | None = None
    #: OpenAI-chat ``reasoning_effort`` (``minimal``/``low``/``medium``/``high``).
    reasoning_effort: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    max_retries: int = 4
    retry_base_delay: float = 0.5
    retry_max_delay: float = 30.0
    #: Tool rounds (tool dispatches) per turn before the turn stops.
    max_tool_rounds: int = 50
    #: Seconds a tool may run when its decl does not say; None = no limit.
    tool_timeout: float | None = None
    system_prompt: str | None = None
    providers: dict[str, ProviderConfig] = field(
        default_factory=lambda: dict(BUILTIN_PROVIDERS), repr=False
    )

    def __post_init__(self) -> None:
        # Accept ``model="provider/model"`` with the default provider.
        if "/" in self.model:
            provider, model = split_model(self.model)
            if provider in self.providers:
                self.provider, self.model = provider, model
        if self.provider not in self.providers:
            known = ", ".join(sorted(self.providers))
            raise ConfigError(f"unknown provider {self.provider!r} (known: {known})")
        if not self.model:
            self.model = self.providers[self.provider].default_model

    # -- construction -----------------------------------------------------

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Config:
        """Defaults overlaid with the environment, then ``overrides``.

        ``PANTO_MODEL`` (``provider/model``), ``PANTO_BASE_URL``,
        ``PANTO_MAX_TOKENS``, ``PANTO_THINKING_BUDGET``,
        ``PANTO_REASONING_EFFORT``, ``PANTO_MAX_RETRIES``,
        ``PANTO_CONNECT_TIMEOUT``, ``PANTO_READ_TIMEOUT``,
        ``PANTO_MAX_TOOL_ROUNDS``, ``PANTO_SYSTEM_PROMPT``.  Without
        ``PANTO_MODEL`` the default is Anthropic when ``ANTHROPIC_API_KEY`` is
        set, else OpenAI when ``OPENAI_API_KEY`` is set, else the offline
        ``mock`` provider.
        """
        env = os.environ if env is None else env
        kw: dict[str, Any] = {}
        spec = env.get("PANTO_MODEL")
        if spec:
            kw["provider"], kw["model"] = split_model(spec)
        elif env.get("ANTHROPIC_API_KEY"):
            kw["provider"] = "anthropic"
        elif env.get("OPENAI_API_KEY"):
            kw["provider"] = "openai"
        else:
            kw["provider"] = "mock"
        conv: dict[str, tuple[str, Any]] = {
            "PANTO_BASE_URL": ("base_url", str),
            "PANTO_MAX_TOKENS": ("max_tokens", int),
            "PANTO_THINKING_BUDGET": ("thinking_budget", int),
            "PANTO_REASONING_EFFORT": ("reasoning_effort", str),
            "PANTO_MAX_RETRIES": ("max_retries", int),
            "PANTO_CONNECT_TIMEOUT": ("connect_timeout", float),
            "PANTO_READ_TIMEOUT": ("read_timeout", float),
            "PANTO_MAX_TOOL_ROUNDS": ("max_tool_rounds", int),
            "PANTO_SYSTEM_PROMPT": ("system_prompt", str),
        }
        for var, (key, typ) in conv.items():
            raw = env.get(var)
            if raw is None or raw == "":
                continue
            try:
                kw[key] = typ(raw)
            except ValueError:
                raise ConfigError(f"{var}={raw!r}: expected {typ.__name__}") from None
        kw.update(overrides)
        model = kw.get("model")
        if model and "/" in model and "provider" not in overrides:
            kw["provider"], kw["model"] = split_model(model)
        return cls(**kw)

    def with_model(self, spec: str) -> Config:
        """A copy using ``provider/model`` (or a bare provider name, with its
        default model).  A base URL / key override set for another provider
        is dropped when the provider changes."""
        provider, model = split_model(spec)
        if provider not in self.providers:
            known = ", ".join(sorted(self.providers))
            raise ConfigError(f"unknown provider {provider!r} in {spec!r} (known: {known})")
        changes: dict[str, Any] = {"provider": provider, "model": model}
        if provider != self.provider:
            changes.update(base_url=None, api_key=None)
        return dataclasses.replace(self, **changes)

    # -- resolution ---------------------------------------------------------

    @property
    def model_spec(self) -> str:
        return f"{self.provider}/{self.model}"

    @property
    def provider_config(self) -> ProviderConfig:
        return self.providers[self.provider]

    @property
    def wire(self) -> str:
        p = self.provider_config
        if p.mock:
            return mock_wire(self.model)
        return p.wire

    def resolve_base_url(self) -> str:
        return (self.base_url or self.provider_config.base_url).rstrip("/")

    def resolve_api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The key from the config, else the provider's env variable.  Raises
        ``ConfigError`` (naming the variable, never a value) when required and
        missing."""
        p = self.provider_config
        key = self.api_key or p.api_key
        if not key and p.api_key_env:
            key = (os.environ if env is None else env).get(p.api_key_env) or None
        if not key and p.requires_key:
            where = f" (set {p.api_key_env})" if p.api_key_env else ""
            raise ConfigError(f"no API key for provider {p.name!r}{where}")
        return key

    def resolve_headers(self) -> dict[str, str]:
        return {**self.provider_config.headers, **self.headers}


def mock_wire(model: str) -> str:
    """The wire of a ``mock/...`` model: names containing ``openai`` use the
    OpenAI chat wire, everything else the Anthropic messages wire."""
    return "openai-chat" if "openai" in model.lower() else "anthropic-messages"

"""Provider wires: request serialization per wire plus shared transport
helpers.  ``make_provider(config)`` picks the class for the config's wire."""

from __future__ import annotations

from ..config import Config
from ..errors import ConfigError
from .base import PreparedRequest, Provider

__all__ = ["PreparedRequest", "Provider", "make_provider"]


def make_provider(config: Config) -> Provider:
    """The provider for ``config`` (starting the in-process mock server for
    ``mock/...`` models)."""
    wire = config.wire
    if config.provider_config.mock and not config.base_url:
        import dataclasses

        from ..testing import mock_server

        server = mock_server()
        base = server.url + ("/v1" if wire == "openai-chat" else "")
        config = dataclasses.replace(config, base_url=base)
    if wire == "openai-chat":
        from .openai_chat import OpenAIChatProvider

        return OpenAIChatProvider(config)
    if wire == "anthropic-messages":
        from .anthropic import AnthropicProvider

        return AnthropicProvider(config)
    raise ConfigError(f"provider {config.provider!r}: unknown wire {wire!r}")

"""Provider wires: request serialization per wire (``base``, ``anthropic``,
``openai_chat``, ``openai_responses``), the HTTP transport (``transport``) and the offline mock
(``mock``).  ``make_provider(config)`` picks the class for the config's wire."""

from __future__ import annotations

import weakref

from ..config import Config
from ..errors import ConfigError
from .base import PreparedRequest, Provider, ProviderSpec

__all__ = ["PreparedRequest", "Provider", "ProviderSpec", "make_provider"]


def make_provider(config: Config | ProviderSpec) -> Provider:
    """The provider for ``config`` (starting the in-process mock server for
    ``mock/...`` models), or for a ``ProviderSpec`` (wire, base URL, key,
    model options: no layered config needed)."""
    if isinstance(config, ProviderSpec):
        return _wire_class(config.wire, repr(config.model))(config)
    wire = config.wire
    if config.provider_config.mock and not config.base_url:
        from .mock import with_mock_server

        config = with_mock_server(config)
    cls = _wire_class(wire, repr(config.provider))
    if config.provider_config.extension:
        from .extension import make_extension_provider

        return make_extension_provider(config, cls)
    return _shared(cls, ProviderSpec.from_config(config, wire))


#: the plain-wire providers alive in this process, by their spec's key.
#: Such a provider has no state besides its spec (it builds each request
#: from what it is given), so the sessions and turns with one spec share
#: one while any of them holds it: each turn built its own, ~17 us of its
#: start (its secrets registered with a finalizer each time), 6% of a turn's
#: start at 256 turns starting at once.  Weak: a provider (and with it its
#: secrets' registration) goes with the last turn that held it, as before.
#: (An extension's provider has state of its own: made per turn.)
_providers: weakref.WeakValueDictionary[tuple[object, ...], Provider] = (
    weakref.WeakValueDictionary()
)


def _shared(cls: type[Provider], spec: ProviderSpec) -> Provider:
    key = spec.key()
    p = _providers.get(key)
    if p is None:
        p = _providers[key] = cls(spec)
    return p


def _wire_class(wire: str, what: str) -> type[Provider]:
    if wire == "openai-chat":
        from .openai_chat import OpenAIChatProvider

        return OpenAIChatProvider
    if wire == "anthropic-messages":
        from .anthropic import AnthropicProvider

        return AnthropicProvider
    if wire == "openai-responses":
        from .openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider
    raise ConfigError(f"provider {what}: unknown wire {wire!r}")

"""What every provider wire implements, and the transport helpers they share.

A provider turns panto's ``Conversation`` + tool declarations into one HTTP
request (``build_request``) and an HTTP error response into a clear
``ProviderError`` (``error_from_response``).  Streaming, decoding and retries
are wire-independent: the transport is ``providers.transport``, the turn
loop ``panto.agent``.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import Config
from ..conversation import Message, Text
from ..errors import ProviderError
from ..models import model_info
from ..tools import ToolDecl
from .transport import (
    backoff_delay,
    logger,
    redact,
    redact_headers,
    register_secrets,
    retry_after_seconds,
    secret_header_values,
)

__all__ = [
    "RETRYABLE_STATUS",
    "PreparedRequest",
    "Provider",
    "ProviderSpec",
    "backoff_delay",
    "logger",
    "redact",
    "redact_headers",
    "retry_after_seconds",
    "system_text",
]

#: HTTP statuses worth sending again (529 is Anthropic's "overloaded").
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """One provider request, ready to send."""

    url: str
    headers: dict[str, str]
    body: bytes
    #: Strings that must never appear in logs or error text (the API key).
    secrets: tuple[str, ...] = ()

    def __repr__(self) -> str:  # never show headers: they hold the key
        return f"PreparedRequest(url={self.url!r}, body={len(self.body)} bytes)"


#: What stands for an image (after its marker) when the model takes none.
IMAGES_OFF_NOTE = "not sent: this model does not take images ([models] images = false)"


def system_text(messages: Sequence[Message]) -> str:
    """All system messages' text, joined by blank lines."""
    parts = []
    for m in messages:
        if m.role == "system":
            t = "\n".join(b.text for b in m.content if isinstance(b, Text))
            if t:
                parts.append(t)
    return "\n\n".join(parts)


@dataclass(frozen=True)
class ProviderSpec:
    """Everything a provider needs, without the layered ``Config``: the
    wire, where to send, the credentials and the model with its options (a
    proxy has these, not a config).  ``ProviderSpec.from_config`` resolves
    them from a ``Config``."""

    wire: str
    base_url: str
    model: str
    api_key: str | None = None
    #: extra request headers (their credential values are scrubbed too)
    headers: Mapping[str, str] = field(default_factory=dict)
    max_tokens: int = 8192
    #: the body key of the output limit (OpenAI chat: ``max_tokens`` or
    #: ``max_completion_tokens``)
    max_tokens_field: str = "max_tokens"
    thinking_budget: int | None = None
    reasoning_effort: str | None = None
    cache_enabled: bool = True
    cache_ttl: str = "5m"
    #: send a ``prompt_cache_key`` (OpenAI's own API; other servers may reject it)
    prompt_cache_key: bool = False
    #: send images (False: each image is a text note naming it)
    images: bool = True

    def key(self) -> tuple[Any, ...]:
        """The spec as a hashable value (its headers as their items): equal
        keys, interchangeable providers (``providers.make_provider`` shares
        one among the sessions of a process).  Every field is in it
        (a test checks)."""
        return (
            self.wire,
            self.base_url,
            self.model,
            self.api_key,
            tuple(self.headers.items()),
            self.max_tokens,
            self.max_tokens_field,
            self.thinking_budget,
            self.reasoning_effort,
            self.cache_enabled,
            self.cache_ttl,
            self.prompt_cache_key,
            self.images,
        )

    @classmethod
    def from_config(cls, config: Config, wire: str | None = None) -> ProviderSpec:
        """The spec ``config`` resolves to (``wire``: its ``config.wire``,
        when the caller has it already)."""
        return cls(
            wire=wire or config.wire,
            base_url=config.resolve_base_url(),
            model=config.model,
            api_key=config.resolve_api_key(),
            headers=config.resolve_headers(),
            max_tokens=config.max_tokens,
            max_tokens_field=config.provider_config.max_tokens_field,
            thinking_budget=config.thinking_budget,
            reasoning_effort=config.reasoning_effort,
            cache_enabled=config.cache_enabled,
            cache_ttl=config.cache_ttl,
            prompt_cache_key=config.provider_config.name == "openai",
            images=model_info(config).images is not False,
        )


class Provider(ABC):
    """One wire's request serialization for one provider: built from a
    ``ProviderSpec``, or from a ``Config`` (``ProviderSpec.from_config``)."""

    wire: str
    #: whether ``build_request`` may block (an extension's Lua ``prepare``):
    #: the async turn driver then builds the request off the event loop
    build_blocks: bool = False

    def __init__(self, source: Config | ProviderSpec) -> None:
        spec = source if isinstance(source, ProviderSpec) else ProviderSpec.from_config(source)
        self.spec = spec
        #: the config it was built from (None for a spec): subclasses that
        #: need more of it (extension providers) read it here
        self.config: Config | None = None if isinstance(source, ProviderSpec) else source
        self.base_url = spec.base_url
        self.api_key = spec.api_key
        self.extra_headers = dict(spec.headers)
        secrets = [self.api_key] if self.api_key else []
        secrets += secret_header_values(self.extra_headers)
        self.secrets: tuple[str, ...] = tuple(dict.fromkeys(secrets))
        register_secrets(self.secrets, owner=self)  # scrubbed while this provider lives
        #: send images (False: the model's ``[models] images = false``; each
        #: image is then a text note naming it)
        self.images = spec.images

    @property
    @abstractmethod
    def url(self) -> str: ...

    @abstractmethod
    def headers(self) -> dict[str, str]: ...

    @abstractmethod
    def body(self, messages: Sequence[Message], tools: Sequence[ToolDecl]) -> dict[str, Any]:
        """The request JSON (a dict) for the conversation and tools."""

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolDecl]
    ) -> PreparedRequest:
        text = json.dumps(self.body(messages, tools), ensure_ascii=False, separators=(",", ":"))
        try:
            body = text.encode()
        except UnicodeEncodeError:
            # lone surrogates (a session stored before panto.storable cleaned
            # them): sent as U+FFFD, never a crashed request
            from ..storable import clean_text

            body = clean_text(text).encode()
        return PreparedRequest(self.url, self.headers(), body, self.secrets)

    def error_from_response(
        self, status: int, headers: Mapping[str, str], body: bytes
    ) -> ProviderError:
        """A clear ``ProviderError`` from an HTTP error response: the
        provider's JSON error message and type when it sent one."""
        etype: str | None = None
        message = ""
        text = body.decode("utf-8", "replace").strip()
        try:
            data = json.loads(text) if text else None
        except ValueError:
            data = None
        if isinstance(data, dict):
            err = data.get("error", data)
            if isinstance(err, dict):
                message = str(err.get("message") or "")
                t = err.get("type") or err.get("code")
                etype = str(t) if t else None
            elif isinstance(err, str):
                message = err
            if not message and isinstance(data.get("message"), str):
                message = data["message"]
        if not message:
            message = text[:500] if text else _REASONS.get(status, "request failed")
        message = redact(message, self.secrets)
        retryable = status in RETRYABLE_STATUS or etype in (
            "overloaded_error",
            "rate_limit_error",
            "api_error",
        )
        return ProviderError(message, status=status, type=etype, retryable=retryable)


_REASONS = {
    400: "bad request",
    401: "unauthorized (check the API key)",
    403: "forbidden",
    404: "not found (check the base URL and model)",
    408: "request timeout",
    409: "conflict",
    413: "request too large",
    429: "rate limited",
    500: "internal server error",
    502: "bad gateway",
    503: "service unavailable",
    504: "gateway timeout",
    529: "overloaded",
}

"""What every provider wire implements, and the transport helpers they share.

A provider turns panto's ``Conversation`` + tool declarations into one HTTP
request (``build_request``) and an HTTP error response into a clear
``ProviderError`` (``error_from_response``).  Streaming, decoding and retries
are wire-independent and live in ``panto.stream``.
"""

from __future__ import annotations

import json
import logging
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import Config
from ..conversation import Message, Text
from ..errors import ProviderError
from ..tools import ToolDecl

__all__ = [
    "RETRYABLE_STATUS",
    "PreparedRequest",
    "Provider",
    "backoff_delay",
    "logger",
    "redact",
    "redact_headers",
    "retry_after_seconds",
    "system_text",
]

logger = logging.getLogger("panto")


class _RedactingFilter(logging.Filter):
    """Defence in depth: scrub every API key panto has seen from records
    logged on the ``panto`` logger (panto never logs keys on purpose)."""

    def __init__(self) -> None:
        super().__init__("panto")
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            msg = record.getMessage()
            clean = redact(msg, tuple(self.secrets))
            if clean != msg:
                record.msg, record.args = clean, None
        return True


_filter = _RedactingFilter()
logger.addFilter(_filter)

#: HTTP statuses worth sending again (529 is Anthropic's "overloaded").
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})

_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "proxy-authorization"})


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    url: str
    headers: dict[str, str]
    body: bytes
    #: Strings that must never appear in logs or error text (the API key).
    secrets: tuple[str, ...] = ()

    def __repr__(self) -> str:  # never show headers: they hold the key
        return f"PreparedRequest(url={self.url!r}, body={len(self.body)} bytes)"


def redact(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret (and its first 8+ characters, which some
    providers echo back) replaced by ``***``."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
            if len(s) > 12:
                text = text.replace(s[:-4], "***")
    return text


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: ("***" if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()}


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """``retry-after-ms`` (OpenAI) or ``Retry-After`` as seconds or an HTTP
    date; None when absent or unparseable."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        import email.utils  # (a rare path: not imported at start-up)

        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(attempt: int, base: float, cap: float, retry_after: float | None) -> float:
    """Exponential backoff with jitter (attempt counts from 1).  A
    ``Retry-After`` from the server wins (never shortened, at most 10 min)."""
    if retry_after is not None:
        return min(retry_after, 600.0)
    delay = min(cap, base * (2 ** (attempt - 1)))
    return delay * (0.5 + random.random() / 2)


def system_text(messages: Sequence[Message]) -> str:
    """All system messages' text, joined by blank lines."""
    parts = []
    for m in messages:
        if m.role == "system":
            t = "\n".join(b.text for b in m.content if isinstance(b, Text))
            if t:
                parts.append(t)
    return "\n\n".join(parts)


class Provider(ABC):
    """One wire's request serialization for one configured provider."""

    wire: str

    def __init__(self, config: Config) -> None:
        self.config = config
        self.base_url = config.resolve_base_url()
        self.api_key = config.resolve_api_key()
        self.extra_headers = config.resolve_headers()
        self.secrets: tuple[str, ...] = (self.api_key,) if self.api_key else ()
        _filter.secrets.update(self.secrets)

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
        body = json.dumps(
            self.body(messages, tools), ensure_ascii=False, separators=(",", ":")
        ).encode()
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

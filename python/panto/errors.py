"""The exception hierarchy.  Every error panto raises is a PantoError."""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "DecodeError",
    "ExtensionError",
    "PantoError",
    "ProviderError",
    "SessionError",
    "ToolError",
    "TruncatedStream",
]


class PantoError(Exception):
    """Base class of every panto error."""


class DecodeError(PantoError):
    """The bytes are not a valid stream of the wire being decoded.

    ``code`` is the C core's error name: ``bad_sse``, ``bad_json``,
    ``protocol``, ``truncated``, ``limit``, ``invalid_argument`` or
    ``no_memory``.  ``offset`` is the byte offset in the response body of
    the line (SSE errors) or the event (JSON and protocol errors) at fault
    -- for truncation and limits on undecoded input, every byte fed --
    when the decoder raised the error, else None (``panto_error.offset``).
    """

    def __init__(self, message: str, code: str = "protocol", offset: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.offset = offset


class TruncatedStream(DecodeError):
    """The input ended before the wire's terminal event."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message, "truncated", offset)


class ProviderError(PantoError):
    """The provider reported an error: an HTTP error status, or an error
    object inside a 200 stream (``status`` is then 200)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        type: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.message = message
        self.retryable = retryable
        #: Seconds the server asked to wait (``Retry-After``), if it did.
        self.retry_after = retry_after

    def __str__(self) -> str:
        parts = []
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.type:
            parts.append(self.type)
        prefix = " ".join(parts)
        return f"{prefix}: {self.message}" if prefix else self.message


class ConfigError(PantoError):
    """Configuration is invalid: names the file, the key and what was expected."""


class ToolError(PantoError):
    """A tool failed, or a tool registration is invalid."""


class ExtensionError(PantoError):
    """A Lua extension failed to load or activate."""


class SessionError(PantoError):
    """A session file cannot be read or written."""

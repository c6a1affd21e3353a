"""Error responses in each client wire's own shape (before the first byte;
after it, the codec's encoders write errors in-band)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ANTHROPIC_TYPES", "error_body", "error_status", "openai_type"]

#: Anthropic's error type per HTTP status.
ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "overloaded_error",
    504: "api_error",
    529: "overloaded_error",
}

_OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def openai_type(status: int) -> str:
    return _OPENAI_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def error_status(wire: str, status: int) -> int:
    """The status a client of ``wire`` gets: Anthropic's 529 is a 503 for
    OpenAI clients (their SDKs know no 529)."""
    return 503 if status == 529 and wire == "openai-chat" else status


def error_body(wire: str, status: int, message: str, type: str | None = None) -> bytes:
    """The JSON error body a client of ``wire`` expects."""
    obj: dict[str, Any]
    if wire == "anthropic-messages":
        t = type if type in ANTHROPIC_TYPES.values() else ANTHROPIC_TYPES.get(status, "api_error")
        obj = {"type": "error", "error": {"type": t, "message": message}}
    else:
        code = type if type else None
        obj = {
            "error": {"message": message, "type": openai_type(status), "param": None, "code": code}
        }
    return json.dumps(obj, ensure_ascii=False).encode()

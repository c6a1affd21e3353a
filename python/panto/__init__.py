"""panto: a minimal, fast, extensible coding agent and LLM-streaming library.

Quick start::

    import panto
    dec = panto.StreamDecoder("anthropic-messages")
    for chunk in body:           # bytes from any HTTP client
        dec.feed(chunk)
        for ev in dec: ...
    dec.close()                  # EOF: raises panto.TruncatedStream if cut short

Everything is imported lazily (PEP 562), so ``import panto`` stays cheap: the
compiled core loads on first use of the decoder, httpx and lupa only when an
agent or the Lua runtime needs them.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~5 ms

# public name -> submodule that defines it
_LAZY: dict[str, str] = {
    # decoding
    "StreamDecoder": "decoder",
    "decode": "decoder",
    "accumulate": "decoder",
    "WIRES": "decoder",
    # errors
    "PantoError": "errors",
    "DecodeError": "errors",
    "TruncatedStream": "errors",
    "ProviderError": "errors",
    "ConfigError": "errors",
    "ToolError": "errors",
    "ExtensionError": "errors",
    "SessionError": "errors",
    # events
    "Event": "events",
    "MessageStart": "events",
    "BlockStart": "events",
    "ToolDetails": "events",
    "ContentDelta": "events",
    "BlockComplete": "events",
    "MessageComplete": "events",
    "ToolCallStart": "events",
    "ToolResult": "events",
    "ProviderRetry": "events",
    "CompactionStart": "events",
    "CompactionEnd": "events",
    "SSEEvent": "events",
    "event_to_dict": "events",
    # conversation model
    "Conversation": "conversation",
    "Message": "conversation",
    "Usage": "conversation",
    "Text": "conversation",
    "Thinking": "conversation",
    "RedactedThinking": "conversation",
    "ToolUse": "conversation",
    "ToolResultBlock": "conversation",
    "Block": "conversation",
    # tools
    "Tool": "tools",
    "ToolSource": "tools",
    "ToolDecl": "tools",
    "ToolCall": "tools",
    "ToolOutput": "tools",
    "FunctionTool": "tools",
    "CancelToken": "tools",
    # agent and configuration
    "Agent": "agent",
    "Config": "config",
}

_SUBMODULES = frozenset(
    {
        "agent",
        "cli",
        "config",
        "conversation",
        "decoder",
        "errors",
        "events",
        "lua",
        "providers",
        "testing",
        "tools",
    }
)

__all__ = ["__version__", *_LAZY]


def _import(module: str) -> object:
    full = f"{__name__}.{module}"
    __import__(full)
    return sys.modules[full]


def _version() -> str:
    """The version written at build time from include/panto.h's macros
    (pyproject: ``[[tool.scikit-build.generate]]``)."""
    try:
        from ._version import __version__ as version
    except ImportError:  # the source tree on PYTHONPATH: no build step wrote it
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        try:
            return dist_version("panto")
        except PackageNotFoundError:
            return "0+unknown"
    return version


def __getattr__(name: str) -> object:
    if name == "__version__":
        value = globals()[name] = _version()
        return value
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(_import(module), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value
    if name in _SUBMODULES:
        return _import(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .agent import Agent
    from .config import Config
    from .conversation import (
        Block,
        Conversation,
        Message,
        RedactedThinking,
        Text,
        Thinking,
        ToolResultBlock,
        ToolUse,
        Usage,
    )
    from .decoder import WIRES, StreamDecoder, accumulate, decode
    from .errors import (
        ConfigError,
        DecodeError,
        ExtensionError,
        PantoError,
        ProviderError,
        SessionError,
        ToolError,
        TruncatedStream,
    )
    from .events import (
        BlockComplete,
        BlockStart,
        CompactionEnd,
        CompactionStart,
        ContentDelta,
        Event,
        MessageComplete,
        MessageStart,
        ProviderRetry,
        SSEEvent,
        ToolCallStart,
        ToolDetails,
        ToolResult,
    )
    from .tools import CancelToken, FunctionTool, Tool, ToolCall, ToolDecl, ToolOutput, ToolSource

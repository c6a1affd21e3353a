"""``panto -p PROMPT``: one turn, printed as text, json or stream-json.

- ``text``: the answer's text, streamed to stdout; tool calls as one-line
  summaries and errors on stderr (a terminal also gets the thinking and a
  usage line there, dimmed).
- ``json``: one JSON object when the turn ends (``{"type": "result", ...}``).
- ``stream-json``: one JSON object per line per event
  (``panto.events.event_to_dict``), then a ``result`` (or ``error``) line.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any

from ..errors import PantoError, ProviderError, SessionError
from ..events import MessageComplete, event_to_dict
from ..images import prompt_attachments
from .common import warn
from .render import Renderer, stall_hint_after, usage_line, wait_hint_after
from .signals import Terminated

if TYPE_CHECKING:
    from ..agent import Agent
    from ..conversation import Message

__all__ = ["one_shot", "FORMATS"]

FORMATS = ("text", "json", "stream-json")


def _error_dict(e: BaseException) -> dict[str, Any]:
    d: dict[str, Any] = {"message": str(e), "kind": type(e).__name__}
    if isinstance(e, ProviderError):
        d.update(status=e.status, type=e.type, retryable=e.retryable)
    return d


def _session(agent: Agent) -> dict[str, Any]:
    """The session and its leaf entry, for scripts that branch later
    (``panto --resume ID --at LEAF``); None without a session."""
    store = agent.store
    return {
        "session_id": getattr(store, "session_id", None) or None,
        "leaf_id": getattr(store, "leaf_id", None),
    }


def _result(
    agent: Agent, stream: Any, started: float, final: MessageComplete | None
) -> dict[str, Any]:
    msg: Message | None = final.message if final else None
    return {
        "type": "result",
        "is_error": msg is None or msg.error is not None,
        "result": msg.text if msg else "",
        "stop_reason": final.stop_reason if final else None,
        "error": msg.error if msg else None,
        "model": agent.config.model_spec,
        "usage": stream.usage.to_dict(),
        "duration_ms": round((time.perf_counter() - started) * 1000),
        "rounds": stream.rounds + 1,
        "messages": [m.to_dict() for m in stream.messages],
        **_session(agent),
    }


def one_shot(agent: Agent, prompt: str, fmt: str) -> int:
    out = sys.stdout
    att = prompt_attachments(prompt)  # @path/to/image.png, @file, a pasted path
    for p in att.problems:
        warn(p)
    try:
        agent.submit_user_message(prompt, att.images, files=att.files)
    except SessionError as e:
        print(
            f"panto: {e}; the prompt was not sent and the session file is unchanged",
            file=sys.stderr,
        )
        return 1
    for line in att.shown:  # what was attached, where warnings go
        print(f"panto: {line}", file=sys.stderr)
    started = time.perf_counter()
    final: MessageComplete | None = None
    tty = fmt == "text" and sys.stderr.isatty()  # a status line while waiting
    cfg = agent.config
    renderer = Renderer(
        out,
        sys.stderr,
        color=sys.stderr.isatty(),
        show_thinking=False,
        thinking_to_err=tty,  # (a script reading stderr gets errors only)
        status=tty,
        timeouts=(cfg.first_byte_timeout, cfg.idle_timeout),
        hint_after=wait_hint_after(),
        stall_after=stall_hint_after(),
    )
    stream = agent.run()
    try:
        with renderer.busy("model"), stream:
            for ev in stream:
                if type(ev) is MessageComplete and ev.final:
                    final = ev
                if fmt == "stream-json":
                    out.write(json.dumps(event_to_dict(ev), ensure_ascii=False) + "\n")
                    out.flush()
                elif fmt == "text":
                    renderer.event(ev)
    except PantoError as e:
        if fmt == "text":
            renderer.newline()
            print(f"panto: error: {e}", file=sys.stderr)
        else:
            doc: dict[str, Any] = {"type": "error", "error": _error_dict(e)}
            doc["model"] = agent.config.model_spec
            doc.update(_session(agent))
            if fmt == "json":
                doc["messages"] = [m.to_dict() for m in stream.messages]
            out.write(json.dumps(doc, ensure_ascii=False) + "\n")
        return 1
    except Terminated:
        raise
    except KeyboardInterrupt:
        renderer.newline()
        print("panto: cancelled", file=sys.stderr)
        return 130
    result = _result(agent, stream, started, final)
    if fmt in ("json", "stream-json"):
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
    else:
        renderer.newline()
        if tty:  # as the REPL shows it; a script reading stderr gets errors only
            seconds = time.perf_counter() - started
            renderer.note(usage_line(stream.usage, seconds, _cost(agent, stream.usage)))
    out.flush()
    return 1 if result["is_error"] else 0


def _cost(agent: Agent, usage: Any) -> float | None:
    """USD of ``usage`` at the model's price, None when unknown."""
    from ..models import model_info

    try:
        return model_info(agent.config).cost(usage)
    except PantoError:
        return None

"""Compaction: replace a long conversation with a summary of it.

``Agent.compact`` sends the conversation to the model as a plain-text
transcript (not as the conversation itself: no tools need to be offered, so
the model cannot start calling them, and a provider that refuses tool blocks
without tool definitions is no problem) followed by the compaction prompt,
and keeps the reply as the summary.  The session records a ``compaction``
entry; the full history stays in the file, only omitted from the context.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..conversation import (
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    Conversation,
    Image,
    Message,
    RedactedThinking,
    Text,
    Thinking,
    ToolResultBlock,
    ToolUse,
    compaction_summary_message,
)
from ..errors import PantoError
from ..images import image_marker, image_tokens

if TYPE_CHECKING:
    from .turn import TurnContext

__all__ = [
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "DEFAULT_COMPACTION_PROMPT",
    "Compaction",
    "CompactionCancelled",
    "CompactionJob",
    "compaction_due",
    "compaction_summary_message",
    "context_tokens",
    "cut_point",
    "keep_budget",
    "summary_conversation",
    "summary_of",
    "transcript",
]

#: What the model is asked for, unless a ``before_compact`` hook or the caller
#: supplies another prompt.
DEFAULT_COMPACTION_PROMPT = (
    "Summarize the conversation above. The summary replaces it: the work must be able to "
    "continue from the summary alone. Include, concretely (names, paths, numbers):\n"
    "- the user's requests and goals, in order, and any constraints they stated;\n"
    "- decisions made, and why;\n"
    "- files read, created or changed, with what changed;\n"
    "- commands run and what they showed; errors met and how they were resolved;\n"
    "- the current state, and what remains to be done, with the next step.\n"
    "Write only the summary."
)

#: The system prompt of the summarizing request.
SUMMARIZER_SYSTEM = (
    "You summarize conversations between a user and a coding agent so the agent can "
    "continue the work from the summary."
)

#: A tool result longer than this is cut in the transcript (head and tail kept).
MAX_TOOL_RESULT_CHARS = 4000


@dataclass(frozen=True, slots=True)
class Compaction:
    """What ``Agent.compact`` did."""

    summary: str
    #: the context's size before, in tokens: the last reply's usage, or an
    #: estimate (characters / 4) when no reply reported usage
    tokens_before: int
    #: how many messages (not counting the system prompt) the summary replaced
    messages_before: int


class CompactionCancelled(PantoError):
    """The summary request was cancelled (the turn that asked for it was);
    nothing changed."""


@dataclass(frozen=True)
class CompactionJob:
    """An auto-compaction as the turn's driver runs it: the summarizing turn
    is a nested turn of the same driver (``open_turn``: its context; no
    tools, no hooks, nothing persisted), then ``finish()`` keeps the summary
    (the store's ``compaction`` entry, the conversation swapped) and gives
    the ``CompactionEnd`` event; ``failed(error)`` gives the event of a
    summary that failed (the conversation unchanged).  ``finish`` writes to
    the store: the async driver calls it in a worker thread."""

    open_turn: Callable[[], TurnContext]
    finish: Callable[[], Any]
    failed: Callable[[PantoError], Any]


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters omitted ...]\n{text[-half:]}"


def transcript(messages: Iterable[Message]) -> str:
    """The conversation as text for the summarizer: roles as headings, tool
    calls as ``name(input JSON)``, long tool results clipped, thinking left
    out (it is the model's scratch work, and its signatures mean nothing
    in another request)."""
    names: dict[str, str] = {}
    parts: list[str] = []
    for m in messages:
        lines: list[str] = []
        for b in m.content:
            if isinstance(b, Text):
                lines.append(b.text)
            elif isinstance(b, ToolUse):
                names[b.id] = b.name
                lines.append(f"[tool call] {b.name}({json.dumps(b.input, ensure_ascii=False)})")
            elif isinstance(b, ToolResultBlock):
                label = names.get(b.tool_use_id, b.tool_use_id)
                status = " (error)" if b.is_error else ""
                lines.append(
                    f"[tool result{status}] {label}:\n{_clip(b.content, MAX_TOOL_RESULT_CHARS)}"
                )
                lines.extend(image_marker(i) for i in b.images)
            elif isinstance(b, Image):
                lines.append(image_marker(b))
            elif isinstance(b, (Thinking, RedactedThinking)):
                continue
        if lines:
            parts.append(f"## {m.role}\n" + "\n".join(lines))
    return "\n\n".join(parts)


def summary_request(messages: Iterable[Message], prompt: str, extra: str | None) -> Message:
    """The user message of the summarizing request."""
    text = f"<conversation>\n{transcript(messages)}\n</conversation>\n\n{prompt}"
    if extra:
        text += f"\n\nAdditional instructions from the user:\n{extra}"
    return Message.user(text)


def context_tokens(messages: Iterable[Message]) -> int:
    """The context's size in tokens: the last reply's prompt plus its
    output, as the provider reported them -- a reply from before the last
    compaction does not count (its context was replaced) -- plus an
    estimate of the messages after it (tool results, images); else
    characters / 4 and images by their size (:func:`estimate_tokens`)."""
    msgs = list(messages)
    for i in range(len(msgs) - 1, -1, -1):
        m = msgs[i]
        if is_compaction_summary(m):
            break
        if m.role == "assistant" and m.usage is not None:
            total = m.usage.total_tokens
            if total:
                return total + sum(estimate_tokens(x) for x in msgs[i + 1 :])
    return len(transcript(msgs)) // 4 + sum(_images_tokens(m) for m in msgs)


def is_compaction_summary(m: Message) -> bool:
    return (
        m.role == "user"
        and len(m.content) == 1
        and isinstance(m.content[0], Text)
        and m.content[0].text.startswith(COMPACTION_SUMMARY_PREFIX)
    )


#: What auto-compaction keeps of the recent conversation, verbatim (tokens,
#: estimated as characters / 4); the rest becomes the summary.
KEEP_RECENT_TOKENS = 20_000


def compaction_due(
    messages: Sequence[Message], window: int | None, threshold: float, reserve: int
) -> bool:
    """Auto-compaction is due when the context fills ``threshold`` of the
    model's context ``window``, or leaves less than ``reserve`` tokens free."""
    if not window:
        return False
    used = context_tokens(m for m in messages if m.role != "system")
    limit = min(threshold * window, window - reserve)
    return used >= limit


def estimate_tokens(m: Message) -> int:
    """A message's size in tokens, estimated as characters / 4; an image
    counts by its pixel size (``panto.images.image_tokens``), never by the
    length of its base64."""
    n = 0
    for b in m.content:
        if isinstance(b, (Text, Thinking)):
            n += len(b.text)
        elif isinstance(b, ToolUse):
            n += len(b.name) + len(json.dumps(b.input, ensure_ascii=False))
        elif isinstance(b, ToolResultBlock):
            n += len(b.content)
        elif not isinstance(b, Image):
            n += 1000  # an opaque block: a rough guess
    return n // 4 + _images_tokens(m)


def _images_tokens(m: Message) -> int:
    n = 0
    for b in m.content:
        if isinstance(b, Image):
            n += image_tokens(b)
        elif isinstance(b, ToolResultBlock):
            n += sum(image_tokens(i) for i in b.images)
    return n


def keep_budget(window: int | None) -> int:
    """Tokens of recent conversation auto-compaction keeps verbatim:
    ``KEEP_RECENT_TOKENS``, at most a quarter of the window."""
    return min(KEEP_RECENT_TOKENS, window // 4) if window else KEEP_RECENT_TOKENS


def cut_point(body: Sequence[Message], keep_tokens: int = KEEP_RECENT_TOKENS) -> int:
    """Where to cut ``body`` (the non-system messages): the index of the
    first message kept.  The kept tail is the longest one within
    ``keep_tokens`` that starts at a user or assistant message -- never at a
    tool result, so a tool call is never separated from its result -- and
    leaves something to summarize (0 < index); ``len(body)`` keeps nothing."""
    size = 0
    best = len(body)
    for i in range(len(body) - 1, 0, -1):
        size += estimate_tokens(body[i])
        if size > keep_tokens:
            break
        if body[i].role in ("user", "assistant") and not is_compaction_summary(body[i]):
            best = i
    return best


def summary_conversation(
    messages: Iterable[Message], prompt: str, extra: str | None
) -> Conversation:
    """The summarizing request: the summarizer's system prompt and the
    transcript with the prompt (a turn of its own: no tools, no hooks,
    nothing persisted)."""
    return Conversation(
        [
            Message("system", (Text(SUMMARIZER_SYSTEM),)),
            summary_request(messages, prompt, extra),
        ]
    )


def summary_of(request: Conversation, model_spec: str) -> str:
    """The summary the model wrote in ``request``'s turn; ``PantoError``
    when the reply is empty."""
    reply = request[-1] if len(request) > 2 else None
    summary = reply.text.strip() if reply is not None and reply.role == "assistant" else ""
    if not summary:
        raise PantoError(
            f"compaction: {model_spec} returned no summary; the conversation was not changed"
        )
    return summary

"""The turn stream: one pull iterator over every provider round of a turn and
the tool dispatch between them.

``Agent.run()`` returns a ``Stream``; ``Agent.run_async()`` an
``AsyncStream``.  Both are one driver over the ``Turn`` state machine
(``agent/turn.py``), written once as ``AsyncStream`` (``stream_async.py``)
and generated as ``Stream`` (``stream_sync.py``, by
``scripts/unasync.py``): it sends the turn's requests through the transport
seam (``providers/exchange.py``), feeds it the decoded events, runs its tool
groups (``agent/dispatch.py``), performs its commits (the store's appends:
the async one in a worker thread) and yields what it answers.  Events, in
order::

    [ProviderRetry ...] MessageStart BlockStart ... MessageComplete(final=False)
    ToolCallStart x N   ToolResult x N (as calls finish)
    [ProviderRetry ...] MessageStart ... MessageComplete(final=True)

``MessageComplete(final=True)`` is the last event; after it the iteration
ends.  It never ends before it: a failure raises from ``next()`` instead
(``ProviderError``, ``TruncatedStream``, ``DecodeError``), after the partial
assistant message has been kept in the conversation with ``error`` set.
``MessageComplete.usage`` in a turn stream is the turn's total so far
(``message.usage`` is that message's own).

A response is read up to its terminal event only: then it is closed (a
server that keeps the connection open, silent or sending pings, cannot hold
the turn).  Watchdogs (``[timeouts]``): ``first_byte`` bounds the wait for the
response headers, ``idle`` the time between decoded events (pings and
comments are not progress); either one firing is a retryable error, shown
as a ``ProviderRetry`` when the round had not streamed content yet.

``close()`` (or leaving the ``with`` block, or ``KeyboardInterrupt`` inside
``next()``) cancels: the HTTP response is closed, running tool calls are
cancelled (async: each call's ``CancelToken``, so exactly this turn's calls
stop; sync: the running sources' ``cancel()``), native tools are abandoned,
and the conversation is left valid for the next turn (every tool call gets a
result; the ones that did not finish get an ``is_error`` ``"cancelled"``
result).

Auto-compaction, when a round starts with the context full: a
``CompactionStart`` event, the summary request (a nested turn of this same
driver: a child stream of the same flavour, cancelled with this one), then
``CompactionEnd`` (also on a failure, with ``error``);
a cancel in between leaves the conversation and the session as they were.

Agent hooks: every dispatched call passes through ``before_tool_call`` and
its result through ``after_tool_call``, both off the event loop (sync: on
the group's dispatch thread; async: on the bounded tool pool);
``turn_end`` runs once when the turn ends -- after the final
``MessageComplete`` (when the consumer asks for the next event or closes the
stream), on an error, or on cancel.
"""

from __future__ import annotations

from .stream_async import AsyncStream
from .stream_sync import Stream

__all__ = ["AsyncStream", "Stream"]

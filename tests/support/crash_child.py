"""Child process of the crash tests: opens a session (a file, or a backend
URL and a session id), checks that what it
loads is a prefix of the canonical batch sequence, then appends canonical
batches forever, printing ``<batches committed>`` after each append returns.
It is killed with SIGKILL by the parent at arbitrary points."""

from __future__ import annotations

import sys
import warnings

from panto.conversation import Message, Text, ToolResultBlock, ToolUse, Usage
from panto.sessions import FSJSONLStore, open_backend


def batch(i: int) -> list[Message]:
    """Batch i of the canonical sequence.  No batch ends with a user prompt,
    so a complete prefix never has a dangling prompt."""
    kind = i % 3
    if kind == 0:
        return [
            Message.user(f"prompt {i}"),
            Message(
                "assistant",
                (Text(f"calling {i}"), ToolUse(f"t{i}", "bash", {"command": f"echo {i}"})),
                Usage(i, 1, 2, 3, 4),
                "tool_use",
                "anthropic",
                "claude-x",
            ),
        ]
    if kind == 1:
        # every 7th batch is big, so a kill can land inside the write itself
        body = ("y" * 100 + "\n") * (8000 if i % 7 == 1 else 2)
        return [
            Message("tool", (ToolResultBlock(f"t{i - 1}", f"{i}\n{body}"),)),
            Message("assistant", (Text(f"done {i}"),), Usage(i, 0, 0, 1), "stop", "anthropic", "m"),
        ]
    return [Message("assistant", (Text(f"extra {i}"),), None, "stop", "anthropic", "m")]


def canonical(n_batches: int) -> list[Message]:
    return [m for i in range(n_batches) for m in batch(i)]


def batches_in(n_messages: int) -> int | None:
    """How many whole batches ``n_messages`` messages are, or None."""
    total, i = 0, 0
    while total < n_messages:
        total += len(batch(i))
        i += 1
    return i if total == n_messages else None


def main() -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if len(sys.argv) > 2:  # a backend URL and a session id
            store = open_backend(sys.argv[1]).open(sys.argv[2])
        else:
            store = FSJSONLStore.open(sys.argv[1])
    loaded = store.load_conversation()
    msgs = list(loaded.conversation)
    n = batches_in(len(msgs))
    if n is None or msgs != canonical(n) or loaded.dangling_user is not None:
        print(f"BAD load: {len(msgs)} messages", flush=True)
        return 3
    print(f"start {n}", flush=True)
    while True:
        store.append_messages(batch(n))
        n += 1
        print(n, flush=True)


if __name__ == "__main__":
    sys.exit(main())

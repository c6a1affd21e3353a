"""Child process of test_crash_agent.py (and the conformance suite): runs
one agent turn persisting to a new session (a FSJSONLStore, or a database
named by its URL) and prints progress markers; the parent SIGKILLs it in the
middle of the streaming answer or of a tool call."""

from __future__ import annotations

import sys
import time

from panto.agent import Agent
from panto.config import Config
from panto.events import ContentDelta
from panto.sessions import FSJSONLStore, open_backend
from panto.tools import FunctionTool

KEY = "sk-test-CHILDSECRET-0123456789"


def slow(inp: dict[str, object]) -> str:
    print("tool-start", flush=True)
    time.sleep(30)
    return "never"


def main() -> int:
    provider, base_url, sessions_dir, cwd = sys.argv[1:5]
    if sessions_dir.startswith(("sqlite:", "postgresql:")):  # a database (the conformance suite)
        store = open_backend(sessions_dir).create(cwd)
        print(f"id {store.session_id}", flush=True)
    else:
        store = FSJSONLStore(sessions_dir, cwd)
        print(f"path {store.path}", flush=True)
    config = Config(
        provider=provider, model="test-model", base_url=base_url, api_key=KEY, max_retries=0
    )
    agent = Agent(config, store=store)
    agent.register_tool(FunctionTool("slow", "Sleeps", slow))
    agent.submit_user_message("go")
    with agent.run() as stream:
        for ev in stream:
            if isinstance(ev, ContentDelta):
                print("delta", flush=True)
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

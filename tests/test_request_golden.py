"""Golden request fixtures shared with the Go suite: conversation in, request
body out (see tests/golden/README.md)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from panto.config import BUILTIN_PROVIDERS, Config
from panto.conversation import Message
from panto.providers import make_provider
from panto.tools import ToolDecl

GOLDEN = Path(__file__).resolve().parent / "golden" / "requests"
CASES = sorted(GOLDEN.glob("*.json"))
PROVIDER = {
    "anthropic-messages": "anthropic",
    "openai-chat": "openai",
    "openai-responses": "openai",
}


def test_the_golden_cases_are_there() -> None:
    assert len(CASES) >= 3
    for wire in PROVIDER:
        assert sum(wire in json.loads(p.read_text(encoding="utf-8"))["bodies"] for p in CASES) >= 4


@pytest.mark.parametrize("wire", sorted(PROVIDER))
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_request_body_matches_the_golden_fixture(path: Path, wire: str) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    if wire not in case["bodies"]:
        pytest.skip(f"{path.stem} is about another wire")
    # the built-in openai provider, its wire fixed whatever the base URL
    # (a base URL of its own would make it a compatible server: openai-chat)
    openai = dataclasses.replace(BUILTIN_PROVIDERS["openai"], wire=wire, compat_wire="")
    config = Config(
        providers={**BUILTIN_PROVIDERS, "openai": openai},
        provider=PROVIDER[wire],
        model=case["model"],
        base_url="http://127.0.0.1:9",
        api_key="sk-golden",
        max_tokens=case["max_tokens"],
        cache_enabled=False,  # the golden cases have no prompt caching (README)
    )
    provider = make_provider(config)
    messages = [Message.from_dict(m) for m in case["messages"]]
    tools = [ToolDecl(t["name"], t["description"], t["schema"]) for t in case["tools"]]
    body = json.loads(provider.build_request(messages, tools).body)
    assert body == case["bodies"][wire]

"""Helpers for a real ``panto serve`` subprocess in front of real loopback upstreams
(panto.testing.ScriptedServer, one per wire), for the official SDKs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from panto.testing import ScriptedServer

UPSTREAM_KEY = "sk-upstream-SECRET-123"


@dataclass
class Served:
    url: str
    anthropic_up: ScriptedServer
    openai_up: ScriptedServer
    proc: subprocess.Popen[str]
    stderr: Path

    def log(self) -> str:
        return self.stderr.read_text()


def start_serve(
    env: dict[str, str], cwd: Path, *args: str
) -> tuple[subprocess.Popen[str], str, Path]:
    err = cwd / f"serve-{time.monotonic_ns()}.err"
    proc = subprocess.Popen(
        [sys.executable, "-m", "panto", "serve", "--port", "0", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=open(err, "w"),  # noqa: SIM115 - the child owns it
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("panto serve: listening on "):
        proc.kill()
        raise AssertionError(f"panto serve did not start: {line!r} {err.read_text()}")
    return proc, line.strip().rsplit(" ", 1)[1], err


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def write_config(home: Path, anthropic_url: str, openai_url: str, extra: str = "") -> None:
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(
        f"""
[providers.up-a]
wire = "anthropic-messages"
base_url = "{anthropic_url}"
api_key = "{UPSTREAM_KEY}"
default_model = "claude-up"

[providers.up-o]
wire = "openai-chat"
base_url = "{openai_url}"
api_key = "{UPSTREAM_KEY}"
default_model = "gpt-up"

[retries]
max = 0

[serve.models.smart]
target = "up-a/claude-up"

[serve.models.fast]
target = "up-o/gpt-up"

[serve.models.backed]
target = "up-o/primary"
fallbacks = ["up-a/backup"]
{extra}
"""
    )


def read_events(
    url: str,
    sid: str,
    headers: dict[str, str],
    until: str,
    count: int = 1,
    after: int | None = None,
    timeout: float = 60,
) -> list[dict[str, Any]]:
    """Events of an agent session's stream up to the ``count``-th ``until``."""
    import httpx

    h = dict(headers)
    if after is not None:
        h["last-event-id"] = str(after)
    out: list[dict[str, Any]] = []
    seen = 0
    with httpx.stream(
        "GET", f"{url}/v1/agent/sessions/{sid}/events", headers=h, timeout=timeout
    ) as r:
        assert r.status_code == 200
        ev: dict[str, Any] = {}
        for line in r.iter_lines():
            if line.startswith("id: "):
                ev = {"id": int(line[4:])}
            elif line.startswith("event: "):
                ev["event"] = line[7:]
            elif line.startswith("data: "):
                ev["data"] = json.loads(line[6:])
                out.append(ev)
                if ev["event"] == until:
                    seen += 1
                    if seen == count:
                        return out
    return out


def create_session(url: str, headers: dict[str, str], cwd: Path) -> str:
    import httpx

    r = httpx.post(
        f"{url}/v1/agent/sessions",
        json={"model": "mock/anthropic", "cwd": str(cwd)},
        headers=headers,
    )
    assert r.status_code == 201, r.text
    return str(r.json()["id"])

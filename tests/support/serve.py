"""Helpers for a real ``panto serve`` subprocess in front of real loopback upstreams
(panto.testing.ScriptedServer, one per wire), for the official SDKs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

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

"""``panto serve`` keys: hashed keys limited to models, both header forms,
and no listening beyond loopback without keys."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from support.serve import start_serve, stop, write_config

from panto.conversation import Text
from panto.serve.settings import hash_key
from panto.testing import Reply, ScriptedServer


def test_keys_limit_models_and_take_both_headers(isolated_home: Path, tmp_path: Path) -> None:
    with ScriptedServer() as a, ScriptedServer() as o:
        write_config(
            isolated_home,
            a.base_url("anthropic-messages"),
            o.base_url("openai-chat"),
            f'\n[serve.keys.alice]\nsha256 = "{hash_key("alice-key")}"\nmodels = ["fast"]\n',
        )
        env = {**os.environ, "PANTO_STARTUP_CACHE": "0", "PANTO_SERVE_KEYS": "env-key-1"}
        proc, url, err = start_serve(env, tmp_path)
        try:
            body = {
                "model": "fast",
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "x"}],
            }
            assert httpx.post(url + "/v1/messages", json=body).status_code == 401
            r = httpx.post(url + "/v1/messages", json=body, headers={"x-api-key": "wrong"})
            assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
            o.push(Reply([Text("ok")]), Reply([Text("ok")]), Reply([Text("ok")]))
            assert (
                httpx.post(
                    url + "/v1/messages", json=body, headers={"x-api-key": "alice-key"}
                ).status_code
                == 200
            )
            with pytest.raises(anthropic.PermissionDeniedError):
                anthropic.Anthropic(
                    base_url=url, api_key="alice-key", max_retries=0
                ).messages.create(
                    model="smart", max_tokens=5, messages=[{"role": "user", "content": "x"}]
                )
            ok = openai.OpenAI(base_url=url + "/v1", api_key="alice-key", max_retries=0)
            assert ok.chat.completions.create(
                model="fast", messages=[{"role": "user", "content": "x"}]
            ).choices
            assert [m.id for m in ok.models.list()] == ["fast"]
            env_client = openai.OpenAI(base_url=url + "/v1", api_key="env-key-1", max_retries=0)
            assert env_client.chat.completions.create(
                model="fast", messages=[{"role": "user", "content": "x"}]
            ).choices
            assert "alice-key" not in err.read_text()
        finally:
            stop(proc)


def test_non_loopback_without_keys_is_refused(isolated_home: Path, tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "panto", "serve", "--host", "0.0.0.0", "--port", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert "without keys" in r.stderr and "Traceback" not in r.stderr


def test_sigterm_lets_a_stream_finish(isolated_home: Path, tmp_path: Path) -> None:
    import signal
    import threading

    with ScriptedServer() as a, ScriptedServer() as o:
        write_config(isolated_home, a.base_url("anthropic-messages"), o.base_url("openai-chat"))
        proc, url, _ = start_serve({**os.environ, "PANTO_STARTUP_CACHE": "0"}, tmp_path)
        try:
            o.push(Reply([Text("slow words " * 30)], delay=0.03))
            got: list[str] = []

            def client() -> None:
                with httpx.stream(
                    "POST",
                    url + "/v1/chat/completions",
                    json={
                        "model": "fast",
                        "messages": [{"role": "user", "content": "x"}],
                        "stream": True,
                    },
                    timeout=30,
                ) as r:
                    got.append("".join(r.iter_text()))

            t = threading.Thread(target=client)
            t.start()
            import time

            time.sleep(0.5)
            proc.send_signal(signal.SIGTERM)
            t.join(30)
            assert got and got[0].rstrip().endswith("data: [DONE]")
            assert proc.wait(15) in (
                0,
                -signal.SIGTERM,
            )  # uvicorn re-raises the signal once drained
        finally:
            stop(proc)

"""Start-up work panto must not do: TLS certificates for an http:// provider."""

from __future__ import annotations

import ssl
from typing import Any

import pytest

from panto.agent import Agent
from panto.config import Config
from panto.conversation import Text
from panto.errors import PantoError
from panto.testing import Reply, ScriptedServer


def _count_cert_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    loads: list[str] = []
    for name in ("load_verify_locations", "load_default_certs"):
        orig = getattr(ssl.SSLContext, name)

        def counting(self: Any, *a: Any, _orig: Any = orig, _name: str = name, **k: Any) -> Any:
            loads.append(_name)
            return _orig(self, *a, **k)

        monkeypatch.setattr(ssl.SSLContext, name, counting)
    return loads


def test_tls_certificates_load_only_for_https(monkeypatch: pytest.MonkeyPatch) -> None:
    loads = _count_cert_loads(monkeypatch)
    with ScriptedServer() as server:
        server.push(Reply([Text("ok")]))
        config = Config(
            provider="anthropic",
            model="m",
            base_url=server.base_url("anthropic-messages"),
            api_key="k",
            max_retries=0,
        )
        with Agent(config) as agent:
            agent.submit_user_message("hi")
            with agent.run() as stream:
                list(stream)
            assert loads == []  # an http:// provider: no CA bundle read
            # switching to an https provider gets a verifying client
            agent.config = Config(
                provider="anthropic",
                model="m",
                base_url="https://127.0.0.1:9",
                api_key="k",
                max_retries=0,
                connect_timeout=2.0,
            )
            agent.submit_user_message("again")
            with pytest.raises(PantoError), agent.run() as stream:
                list(stream)
    assert loads, "the https request must verify certificates"

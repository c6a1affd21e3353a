"""The offline ``mock`` provider: a ``mock/...`` model talks to the
process-wide ``panto.testing`` server (started on first use), which echoes
the prompt and calls a declared tool on request (``call NAME {json}`` or
``call NAME TEXT``)."""

from __future__ import annotations

import dataclasses

from ..config import Config

__all__ = ["with_mock_server"]


def with_mock_server(config: Config) -> Config:
    """``config`` pointed at the mock server, for the config's wire."""
    from ..testing import mock_server

    server = mock_server()
    base = server.url + ("/v1" if config.wire == "openai-chat" else "")
    return dataclasses.replace(config, base_url=base)

"""Start-up work panto must not do: TLS certificates for an http:// provider."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from panto.agent import Agent
from panto.config import Config
from panto.conversation import Text
from panto.errors import PantoError
from panto.providers.transport import tls_verify
from panto.testing import Reply, ScriptedServer, render_sse


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


def _make_ca_and_server_cert(d: Path) -> tuple[Path, Path, Path]:
    """A test CA, its hashed directory and a localhost certificate it signed."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make test certificates")

    def run(*args: str) -> str:
        return subprocess.run(
            ["openssl", *args], cwd=d, check=True, capture_output=True, text=True, timeout=60
        ).stdout

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=panto test CA")  # fmt: skip
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "srv.key", "-out", "srv.csr",
        "-subj", "/CN=localhost")  # fmt: skip
    (d / "ext.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "srv.pem", "-days", "2", "-extfile", "ext.cnf")  # fmt: skip
    capath = d / "capath"
    capath.mkdir()
    h = run("x509", "-hash", "-noout", "-in", "ca.pem").strip()
    shutil.copy(d / "ca.pem", capath / f"{h}.0")
    return capath, d / "srv.pem", d / "srv.key"


def _https_sse_server(cert: Path, key: Path) -> tuple[int, socket.socket]:
    body = b"".join(render_sse(Reply([Text("secure")]), "anthropic-messages"))
    reply = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n"
        + f"content-length: {len(body)}\r\n\r\n".encode()
        + body
    )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(cert), str(key))
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)

    def handle(raw: socket.socket) -> None:
        try:
            with ctx.wrap_socket(raw, server_side=True) as s:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = s.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                while len(body) < length:  # all of it: closing on unread data resets
                    chunk = s.recv(65536)
                    if not chunk:
                        return
                    body += chunk
                s.sendall(reply)
        except (OSError, ssl.SSLError):
            pass

    def serve() -> None:
        while True:
            try:
                raw, _ = ls.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(raw,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return ls.getsockname()[1], ls


def test_https_verifies_against_the_system_ca_directory_lazily(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The system's hashed CA directory is used as OpenSSL's lazy lookup: a
    server signed by a CA in it is accepted, any other is refused."""
    capath, cert, key = _make_ca_and_server_cert(tmp_path)
    port, ls = _https_sse_server(cert, key)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    real = ssl.get_default_verify_paths()

    def config() -> Config:
        return Config(
            provider="anthropic",
            model="m",
            base_url=f"https://127.0.0.1:{port}",
            api_key="k",
            max_retries=0,
            connect_timeout=5.0,
        )

    try:
        monkeypatch.setattr(
            ssl, "get_default_verify_paths", lambda: real._replace(capath=str(capath))
        )
        loads = _count_cert_loads(monkeypatch)
        with Agent(config()) as agent:
            agent.submit_user_message("hi")
            with agent.run() as stream:
                list(stream)
            assert agent.conversation[-1].text == "secure"
        assert loads == ["load_verify_locations"]  # the directory only, no bundle parsed
        empty = tmp_path / "other-ca"
        empty.mkdir()
        (empty / "00000000.0").write_text("")  # a hashed dir without our CA
        monkeypatch.setattr(
            ssl, "get_default_verify_paths", lambda: real._replace(capath=str(empty))
        )
        with Agent(config()) as agent:
            agent.submit_user_message("hi")
            with pytest.raises(PantoError, match="(?i)certificate"), agent.run() as stream:
                list(stream)
    finally:
        ls.close()
    # a bundle of one's own in SSL_CERT_FILE is loaded as asked (httpx's default)
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    assert tls_verify(True) is True

"""A loopback HTTP/1.1 server on a raw socket (a thread per connection)
whose answers a test writes byte by byte: the clients' framing, keep-alive
and error tests (``http11``, ``ahttp11``)."""

from __future__ import annotations

import gzip
import shutil
import socket
import ssl
import subprocess
import threading
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest


class OneShotServer:
    """Accepts connections; answers each request with ``answer(conn, n)``
    (``n``: the request's number on its connection, from 0)."""

    def __init__(
        self, answer: Callable[[socket.socket, int], bool], tls: ssl.SSLContext | None = None
    ) -> None:
        self.answer = answer
        self.tls = tls
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.requests: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/v1/x"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        if self.tls is not None:
            try:
                conn = self.tls.wrap_socket(conn, server_side=True)
            except OSError:  # the client refused the certificate
                conn.close()
                return
        with conn:
            buf = b""
            n = 0
            while True:
                while b"\r\n\r\n" not in buf:
                    try:
                        data = conn.recv(65536)
                    except OSError:
                        return
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                while len(buf) < length:
                    buf += conn.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + buf[:length])
                buf = buf[length:]
                if not self.answer(conn, n):
                    return
                n += 1

    def close(self) -> None:
        self.sock.close()


def make_ca_and_server_cert(d: Path) -> tuple[Path, Path, Path]:
    """A test CA (``ca.pem``), its hashed directory and a certificate for
    localhost and 127.0.0.1 it signed: (capath, cert, key)."""
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


def encoded_bodies(text: bytes) -> list[tuple[bytes, bytes]]:
    """``text`` as each ``content-encoding`` a client undoes: (encoding, body)."""
    return [
        (b"gzip", gzip.compress(text)),
        (b"deflate", zlib.compress(text)),
        (b"deflate", zlib.compress(text)[2:-4]),  # raw deflate, as some servers send
    ]


def encoded_answer(bodies: list[tuple[bytes, bytes]]) -> Callable[[socket.socket, int], bool]:
    """A ``OneShotServer`` answer: request ``n`` of a connection gets
    ``bodies[n % len(bodies)]`` with its ``content-encoding``."""

    def answer(conn: socket.socket, n: int) -> bool:
        enc, body = bodies[n % len(bodies)]
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-encoding: %s\r\ncontent-length: %d\r\n\r\n%s"
            % (enc, len(body), body)
        )
        return True

    return answer

"""``panto serve`` that cannot listen: one line naming the address and what to
do, never a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from support.serve import start_serve, stop


def _serve(
    tmp_path: Path, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PANTO_STARTUP_CACHE": "0", "PANTO_SERVE_KEYS": "k"}
    return subprocess.run(
        [sys.executable, "-m", "panto", "serve", *args],
        cwd=tmp_path,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_port_in_use_is_one_line_naming_it(isolated_home: Path, tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = _serve(tmp_path, "--port", str(port))
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in lines[0]
    assert "--port 0" in lines[0]


def test_a_host_that_does_not_resolve_is_one_line(isolated_home: Path, tmp_path: Path) -> None:
    r = _serve(tmp_path, "--host", "no-such-host.invalid", "--port", "0")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "'no-such-host.invalid'" in lines[0] and "such as 127.0.0.1" in lines[0]


def test_help_says_where_models_keys_and_docs_are(isolated_home: Path, tmp_path: Path) -> None:
    r = _serve(tmp_path, "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    for what in (
        "/v1/agent/sessions",
        "PROVIDER/MODEL",
        "ANTHROPIC_API_KEY",
        "PANTO_SERVE_KEYS",
        "mock/anthropic",
        "docs/serve.md",
    ):
        assert what in text, what


def test_hash_key_on_a_terminal_does_not_echo_the_key(isolated_home: Path) -> None:
    """``panto serve --hash-key`` typed at a terminal: a prompt, the key not
    shown (a key on screen is in the scrollback), then its sha256."""
    import pexpect

    from panto.serve.settings import hash_key

    env = {**os.environ, "PANTO_STARTUP_CACHE": "0"}
    child = pexpect.spawn(
        sys.executable, ["-m", "panto", "serve", "--hash-key"], env=env, encoding="utf-8"
    )
    try:
        child.expect("key \\(not shown\\): ", timeout=60)
        child.sendline("sk-typed-secret-0123")
        child.expect(pexpect.EOF, timeout=30)
        out = child.before
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "sk-typed-secret-0123" not in out
    assert out.strip() == hash_key("sk-typed-secret-0123")


def test_hash_key_from_a_pipe(isolated_home: Path, tmp_path: Path) -> None:
    from panto.serve.settings import hash_key

    r = _serve(tmp_path, "--hash-key", input="piped-key\n")
    assert r.returncode == 0 and r.stdout.strip() == hash_key("piped-key")
    empty = _serve(tmp_path, "--hash-key", input="")
    assert empty.returncode == 2
    assert empty.stderr.strip() == (
        "panto serve: --hash-key: no key on stdin (panto serve --hash-key < key.txt)"
    )


def test_a_session_url_panto_cannot_use_stops_it_at_start(
    isolated_home: Path, tmp_path: Path
) -> None:
    """As ``panto -p`` does: before, it started, said it was ready, and
    every agent session failed."""
    env = {**os.environ, "PANTO_SESSION_URL": "bogus://x", "PANTO_STARTUP_CACHE": "0"}
    r = subprocess.run(
        [sys.executable, "-m", "panto", "serve", "--port", "0"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (
        "panto serve: unknown session store URL 'bogus://x': sqlite:///path or postgresql://..."
    )


def test_an_alias_naming_no_provider_is_a_warning_at_start(
    isolated_home: Path, tmp_path: Path
) -> None:
    """Said once at start (before, only each client whose request reached
    it learned of it); the server still starts (an extension may register
    the provider)."""
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(
        '[serve.models.smart]\ntarget = "mock/anthropic"\nfallbacks = ["nope/x", "bare", "mock"]\n'
    )
    proc, _, err_path = start_serve({**os.environ, "PANTO_STARTUP_CACHE": "0"}, tmp_path)
    stop(proc)
    err = err_path.read_text()
    lines = [ln for ln in err.splitlines() if ln.startswith("panto serve: warning:")]
    assert len(lines) == 2, err
    assert "[serve.models.smart] 'nope/x': no provider 'nope' is configured" in lines[0]
    assert "'mock'" not in lines[0].split("(providers:")[0]
    assert "[serve.models.smart] 'bare': no provider 'bare' is configured" in lines[1]
    assert "Traceback" not in err

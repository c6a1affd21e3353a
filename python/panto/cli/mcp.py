"""``panto mcp``: list, add and remove MCP servers.

- ``panto mcp list`` connects to every configured server (``[mcp.servers]``
  and, in a trusted project, ``.mcp.json``) and prints each one's state,
  tool count and last error; it exits 1 when a server is not ready (a
  script or a health check can tell).
- ``panto mcp add NAME -- COMMAND [ARGS...]`` (stdio) or ``panto mcp add
  NAME --url URL`` (streamable HTTP) appends ``[mcp.servers.NAME]`` to the
  user's config file; ``panto mcp remove NAME`` takes it out again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .common import load_config

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="panto mcp",
        description="MCP servers: their tools become mcp__SERVER__TOOL (docs/mcp.md).",
    )
    sub = p.add_subparsers(dest="cmd", metavar="{list,add,remove}")
    ls = sub.add_parser(
        "list",
        help="connect to each server; show its state and tools (exit status 1: one is not ready)",
    )
    ls.add_argument("-C", "--cwd", metavar="DIR", help="as if run in DIR")
    ls.add_argument("--tools", action="store_true", help="also list each server's tools")
    ls.add_argument("--timeout", type=float, default=15.0, help="seconds to wait for servers (15)")
    add = sub.add_parser(
        "add",
        help="add a server to your user config",
        usage="panto mcp add NAME [--env K=V ...] -- COMMAND [ARGS...]\n"
        "       panto mcp add NAME --url URL [--header 'K: V' ...] [--bearer-token-env VAR]",
    )
    add.add_argument("name")
    add.add_argument("--url", help="a streamable HTTP endpoint")
    add.add_argument("--env", action="append", default=[], metavar="K=V", help="for a stdio server")
    add.add_argument("--header", action="append", default=[], metavar="'K: V'")
    add.add_argument("--bearer-token-env", metavar="VAR", help="send $VAR as a bearer token")
    add.set_defaults(parser=add)  # (its errors show its own usage lines)
    rm = sub.add_parser("remove", help="remove a server from your user config")
    rm.add_argument("name")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if "--" in argv:  # panto mcp add NAME [options] -- COMMAND ARGS...: the command as it is
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1 :]
    args = parser.parse_args(argv)
    args.command = command
    if args.cmd == "add":
        return _add(args, args.parser)
    if args.cmd == "remove":
        return _remove(args.name)
    if args.cmd is None:
        args = parser.parse_args(["list"])
    return _list(args)


def _list(args: argparse.Namespace) -> int:
    from panto.app import mcp_servers, untrusted_mcp_note
    from panto.mcp import open_source

    cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
    config = load_config("panto mcp", cwd=cwd)
    notes: list[str] = []
    specs = mcp_servers(config, cwd, None, notes.append)
    for n in notes:
        print(f"panto mcp: {n}", file=sys.stderr)
    if not specs:
        print("no MCP servers configured (add one: panto mcp add NAME -- COMMAND ARGS...)")
        why = untrusted_mcp_note(config)
        if why:
            print(f"panto mcp: {why}", file=sys.stderr)
        return 0
    stdio = {spec.name: bool(spec.command) for spec in specs}
    source = open_source(specs)
    not_ready = 0
    try:
        source.wait_ready(args.timeout)
        for st in source.status():
            not_ready += st.state != "ready"
            cached = " (cached list)" if st.state != "ready" and st.tools else ""
            line = f"{st.name:<16} {st.state:<9} {st.tools:>3} tools{cached}  {st.target}"
            print(line)
            if st.state == "starting":  # it never answered the handshake in time
                print(
                    f"  error: no answer within {args.timeout:g} s "
                    "(a slow server: panto mcp list --timeout SECONDS waits longer)"
                )
            elif st.error:
                print(f"  error: {st.error}")
            if st.state in ("starting", "failed") and stdio.get(st.name):
                print(f"  its stderr: {source.log_dir / (st.name + '.log')}")
            if args.tools:
                for d in source.decls():
                    if d.name.startswith(f"mcp__{st.name}__"):
                        print(f"  {d.name}")
    finally:
        source.close()
    return 1 if not_ready else 0


def _user_file() -> Path:
    from panto.config.layers import user_config_file

    return user_config_file()


def _header(name: str) -> str:
    return f"[mcp.servers.{name}]"


def _add(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from panto.patterns import LazyPattern

    name = args.name
    if not LazyPattern(r"[A-Za-z0-9_-]+").fullmatch(name):
        parser.error(f"bad server name {name!r}: use letters, digits, _ and -")
    command = args.command
    if command and args.url:
        parser.error("give a command after -- (stdio) or --url URL (streamable HTTP), not both")
    if not command and not args.url:
        parser.error(
            f"no server given: panto mcp add {name} -- COMMAND ARGS... (stdio) "
            f"or panto mcp add {name} --url URL (streamable HTTP)"
        )
    if args.url and not args.url.startswith(("http://", "https://")):
        parser.error(f"--url {args.url!r}: expected an http:// or https:// URL")
    lines = [_header(name)]
    if command:
        lines.append("command = [" + ", ".join(json.dumps(c) for c in command) + "]")
    else:
        lines.append(f"url = {json.dumps(args.url)}")
    if args.env:
        pairs = []
        for kv in args.env:
            k, sep, v = kv.partition("=")
            if not sep or not k:
                parser.error(f"--env {kv!r}: expected K=V")
            pairs.append(f"{json.dumps(k)} = {json.dumps(v)}")
        lines.append("env = { " + ", ".join(pairs) + " }")
    if args.header:
        pairs = []
        for kv in args.header:
            k, sep, v = kv.partition(":")
            if not sep or not k.strip():
                parser.error(f"--header {kv!r}: expected 'Name: value'")
            pairs.append(f"{json.dumps(k.strip())} = {json.dumps(v.strip())}")
        lines.append("headers = { " + ", ".join(pairs) + " }")
    if args.bearer_token_env:
        lines.append(f"bearer_token_env = {json.dumps(args.bearer_token_env)}")
    f = _user_file()
    old = f.read_text(encoding="utf-8") if f.exists() else ""
    if _find(old.splitlines(), name) is not None:
        print(
            f"panto mcp: {name} is already in {f} (panto mcp remove {name} first)", file=sys.stderr
        )
        return 1
    new = old + ("\n" if old and not old.endswith("\n") else "") + ("\n" if old else "")
    new += "\n".join(lines) + "\n"
    if not _write_checked(f, old, new):
        return 2
    print(f"added MCP server {name} to {f}")
    if command:
        import shutil

        if shutil.which(command[0]) is None:  # added all the same: it may be installed later
            print(
                f"panto mcp: warning: {command[0]!r} is no program here (not on PATH, not an executable file); "
                f"install it, or give its full path (panto mcp remove {name}, then add again)",
                file=sys.stderr,
            )
    return 0


def _find(lines: list[str], name: str) -> tuple[int, int] | None:
    """The line range of ``[mcp.servers.NAME]`` (up to the next table)."""
    heads = {_header(name), f'[mcp.servers."{name}"]'}
    start = None
    for i, line in enumerate(lines):
        s = line.strip()
        if start is None:
            if s in heads:
                start = i
        elif s.startswith("["):
            return start, i
    return (start, len(lines)) if start is not None else None


def _remove(name: str) -> int:
    f = _user_file()
    old = f.read_text(encoding="utf-8") if f.exists() else ""
    lines = old.splitlines()
    span = _find(lines, name)
    if span is None:
        print(f"panto mcp: no server {name} in {f}", file=sys.stderr)
        return 1
    a, b = span
    while a > 0 and not lines[a - 1].strip():
        a -= 1
    new = "\n".join(lines[:a] + lines[b:]).rstrip("\n") + "\n"
    if not _write_checked(f, old, new.lstrip("\n") if new.strip() else ""):
        return 2
    print(f"removed MCP server {name} from {f}")
    return 0


def _write_checked(f: Path, old: str, new: str) -> bool:
    """Write ``new``, check the config still loads, else put ``old`` back."""
    from panto.config import Config
    from panto.errors import ConfigError

    f.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(new)
    try:
        Config.load()
    except ConfigError as e:
        with open(f, "w", encoding="utf-8") as out:
            out.write(old)
        print(f"panto mcp: not changed: {e}", file=sys.stderr)
        return False
    return True

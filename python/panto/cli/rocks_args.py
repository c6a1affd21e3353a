"""Shared pieces of ``panto bootstrap`` and ``panto update``.

The rocks come from the effective layered config (``extensions.rocks`` of
every layer, ``extensions.rock_servers``).  Overrides: ``--rock SPEC`` and
``--config FILE`` (``[extensions] rocks`` / ``rock_servers`` of FILE, several
files concatenated) act on those instead; ``--server`` replaces the servers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ..errors import ConfigError
from ..extensions.rocks import RockResult, SyncReport

__all__ = ["add_rock_args", "print_results", "read_rock_config", "rock_inputs"]


def add_rock_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rock",
        action="append",
        default=[],
        metavar="SPEC",
        help="a luarocks dependency string, e.g. 'lpeg 1.1.0-2' or 'lpeg ~> 1.1', instead of "
        "the configured extensions.rocks (repeatable)",
    )
    p.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="URL|DIR",
        help="a rock server or local directory, instead of the configured "
        "extensions.rock_servers (repeatable)",
    )
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        type=Path,
        help="read [extensions] rocks and rock_servers from FILE instead of the layered "
        "config (repeatable)",
    )
    p.add_argument(
        "-C", "--cwd", metavar="DIR", help="use the configuration as seen from DIR (its project)"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print only problems")


def read_rock_config(files: Sequence[Path]) -> tuple[list[str], list[str]]:
    """``([extensions] rocks, [extensions] rock_servers)`` of ``files``,
    concatenated; each file is read and checked as a config layer is."""
    from ..config.layers import read_layer, resolve_dir

    rocks: list[str] = []
    servers: list[str] = []
    for f in files:
        layer = read_layer("config", f)
        if layer is None:
            raise ConfigError(f"{f}: no such file")
        ext = layer.data.get("extensions", {})
        rocks += ext.get("rocks", [])
        servers += [  # relative directories resolve against the file
            s if "://" in s else resolve_dir(s, layer.origin, str(f.parent))
            for s in ext.get("rock_servers", [])
        ]
    return rocks, servers


def rock_inputs(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The rocks and servers to act on: those of the effective layered config
    (``extensions.rocks`` of every layer, ``extensions.rock_servers``), unless
    ``--rock``/``--config`` name others; ``--server`` replaces the servers."""
    if args.rock or args.config:
        rocks, servers = read_rock_config(args.config)
        rocks += list(args.rock)
    else:
        from ..config import Config

        config = Config.load(cwd=getattr(args, "cwd", None))
        rocks = list(dict.fromkeys(spec for _, spec in config.extension_rocks()))
        servers = config.rock_servers
    if args.server:
        servers = list(args.server)
    return rocks, servers


def _line(r: RockResult) -> str:
    v = f" {r.version}" if r.version else ""
    return f"  {r.action:<11} {r.name}{v}"


def print_results(
    title: str, report: SyncReport, *, quiet: bool = False, out: TextIO | None = None
) -> None:
    out = out or sys.stdout
    if not quiet:
        print(f"{title}:", file=out)
        if not report.results:
            print("  (none)", file=out)
        for r in report.results:
            if r.ok:
                print(_line(r), file=out)
    for r in report.errors:
        print(f"  error: {r.message}", file=sys.stderr if quiet else out)

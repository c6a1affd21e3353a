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
    """``([extensions] rocks, [extensions] rock_servers)`` of ``files``, concatenated."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef, import-not-found, unused-ignore]
    rocks: list[str] = []
    servers: list[str] = []
    for f in files:
        try:
            data = tomllib.loads(f.read_text())
        except (OSError, ValueError) as e:
            raise ConfigError(f"{f}: {e}") from None
        ext = data.get("extensions", {})
        if not isinstance(ext, dict):
            raise ConfigError(f"{f}: extensions: expected a table")
        for key, out in (("rocks", rocks), ("rock_servers", servers)):
            value = ext.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{f}: extensions.{key}: expected a list of strings")
            if key == "rock_servers":  # relative directories resolve against the file
                value = [v if "://" in v else str((f.parent / v).resolve()) for v in value]
            out.extend(value)
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

"""``panto extensions``: every extension entry, its source, whether it is
active, and the rule that decided (the same table as ``/extensions``).

Evaluates every source like a start does (so the Lua runtime starts), but by
default does not install missing rocks: they are listed as warnings
(``--sync`` installs them, as a start would).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from panto.errors import ConfigError

from .common import load_config


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="panto extensions",
        description="List every Lua extension entry: its source (layer and kind), whether "
        "it is active, and which allow/deny rule (or shadowing) decided that.",
    )
    p.add_argument("-C", "--cwd", metavar="DIR", help="as if run in DIR")
    p.add_argument(
        "--no-extensions",
        action="store_true",
        help="as `panto --no-extensions`: only the built-in layer",
    )
    p.add_argument(
        "--deny",
        action="append",
        default=[],
        metavar="GLOB",
        help="as `panto --deny GLOB` (repeatable)",
    )
    p.add_argument(
        "--sync",
        action="store_true",
        help="install missing extensions.rocks first, as a start does",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
    config = load_config("panto extensions", cwd=cwd)
    from panto.errors import ExtensionError
    from panto.lua import LuaRuntime, load_extensions

    try:
        rt = LuaRuntime()
    except ExtensionError as e:  # lupa missing or broken: one line, no traceback
        print(f"panto extensions: {e}", file=sys.stderr)
        return 2
    try:
        try:
            report = load_extensions(
                rt,
                cwd=cwd,
                no_extensions=args.no_extensions,
                deny=args.deny,
                config=config,
                sync_rocks=args.sync,
            )
        except ConfigError as e:
            print(f"panto extensions: {e}", file=sys.stderr)
            return 2
        sys.stdout.write(report.format())
        notice = config.project.notice() if config.project is not None else None
        if notice:  # the project's own extensions were not even looked at
            print(f"panto extensions: {notice}", file=sys.stderr)
    finally:
        rt.close()
    return 1 if report.errors else 0

"""``panto bootstrap``: check the toolchain, reconcile the pinned batteries
and install the missing ``extensions.rocks`` -- what every start does
silently, done explicitly and with progress."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from panto.errors import ConfigError


def main(argv: Sequence[str] | None = None) -> int:
    from panto.extensions import rocks

    from . import rocks_args as cli

    p = argparse.ArgumentParser(
        prog="panto bootstrap",
        description="Check luarocks, the C compiler and the Lua headers; install the pinned "
        "batteries and the missing rocks into $PANTO_HOME/rocks/lua-"
        f"{rocks.LUA_VERSION}/; remove batteries the manifest no longer pins.",
    )
    cli.add_rock_args(p)
    p.add_argument(
        "--manifest",
        type=Path,
        default=None,
        metavar="FILE",
        help="a batteries manifest instead of the one shipped with panto",
    )
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        specs, servers = cli.rock_inputs(args)
        manifest = rocks.load_manifest(args.manifest)
    except ConfigError as e:
        print(f"panto bootstrap: {e}", file=sys.stderr)
        return 2

    def progress(msg: str) -> None:
        if not args.quiet:
            print(msg, flush=True)

    tc = rocks.check_toolchain()
    if not args.quiet:
        print(f"panto home: {rocks.panto_home()}")
        print(f"rock tree:  {rocks.RockTree.default().root}")
        print("toolchain:")
    for ok, text in tc.lines():
        if not ok or not args.quiet:
            print(f"  {'ok  ' if ok else 'MISS'} {text}", file=sys.stdout if ok else sys.stderr)
    report = rocks.bootstrap(
        specs, manifest=manifest, servers=servers, progress=progress, toolchain=tc
    )
    if report.lua_mismatch:
        print(f"error: {report.lua_mismatch}", file=sys.stderr)
    cli.print_results("batteries", report.batteries, quiet=args.quiet)
    for r in report.removed:
        if r.ok and not args.quiet:
            print(f"  removed     {r.name} {r.version} (no longer pinned)")
        elif not r.ok:
            print(f"  error: {r.message}", file=sys.stderr)
    cli.print_results("extensions.rocks", report.rocks, quiet=args.quiet)
    if not args.quiet:
        print("bootstrap: ok" if report.ok else "bootstrap: some rocks are not installed")
    return 0 if report.ok else 1

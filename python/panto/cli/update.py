"""``panto update``: re-resolve and reinstall every rock in ``extensions.rocks``
(the one place where upgrades happen; startup only installs what is missing)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from panto.errors import ConfigError


def main(argv: Sequence[str] | None = None) -> int:
    from panto.extensions import rocks

    from . import rocks_args as cli

    p = argparse.ArgumentParser(
        prog="panto update",
        description="Reinstall every rock of extensions.rocks, picking the newest version "
        "each dependency string allows.",
    )
    cli.add_rock_args(p)
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        specs, servers = cli.rock_inputs(args)
    except ConfigError as e:
        print(f"panto update: {e}", file=sys.stderr)
        return 2
    if not specs:
        if not args.quiet:
            print("panto update: no rocks configured (extensions.rocks is empty)")
        return 0

    def progress(msg: str) -> None:
        if not args.quiet:
            print(msg, flush=True)

    report = rocks.update(specs, servers=servers, progress=progress)
    cli.print_results("extensions.rocks", report, quiet=args.quiet)
    return 0 if report.ok else 1

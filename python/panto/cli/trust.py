"""``panto trust``: agree to a project's ``.panto/`` (docs/security.md).

- ``panto trust [DIR]`` trusts the project of DIR (default: here): the
  nearest directory holding a ``.panto/`` from DIR up to the repository
  root, else DIR itself;
- ``panto trust --list`` prints every stored answer;
- ``panto trust --revoke DIR`` forgets it (the project is untrusted again).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .common import usage_error


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="panto trust",
        description="Trust a project: its .panto/config.toml applies in full (providers, "
        "base URLs, extensions, hooks, MCP servers, [serve], permission rules, sandbox) and "
        "its .panto/extensions/, .panto/tools/, skills and .mcp.json servers load. Until then "
        "panto ignores those and says which (AGENTS.md is always read); the REPL asks once, "
        "panto -p never asks.",
        epilog="Answers are kept in $XDG_CONFIG_HOME/panto/trusted.json, by the project's "
        "real path (a moved project is untrusted again). PANTO_TRUST_ALL=1 trusts every "
        "project (CI, containers). See docs/security.md.",
    )
    p.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help="the project (default: the working directory; its nearest .panto/ decides)",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--list", action="store_true", help="list trusted (and declined) projects")
    g.add_argument("--revoke", action="store_true", help="forget the trust of DIR")
    return p


def _root(arg: str | None, revoke: bool = False) -> Path:
    """The project root of ``arg``: where its nearest ``.panto/`` is, else
    the directory itself."""
    from ..config import find_project_dir

    d = Path(os.path.abspath(arg or os.getcwd()))
    if not d.is_dir():
        if revoke:  # a project deleted since: forget it all the same
            return d.resolve()
        usage_error(f"{arg}: not a directory", "panto trust")
    proj = find_project_dir(d)
    return (proj.parent if proj is not None else d).resolve()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    from ..errors import ConfigError
    from ..policy import trust

    try:
        if args.list:
            if args.dir:
                usage_error("--list takes no DIR", "panto trust")
            entries = trust.entries()
            if not entries:  # stderr: stdout stays the (empty) tab-separated listing
                print("panto trust: no projects trusted or declined yet", file=sys.stderr)
            for e in entries:
                state = "trusted" if e.trusted else "declined"
                print(f"{e.path}\t{state}\t{e.at}")
            return 0
        root = _root(args.dir, args.revoke)
        if args.revoke:
            if trust.lookup(root) is None:
                print(f"panto trust: {root} is not in {trust.trust_file()}", file=sys.stderr)
                return 1
            trust.set_trust(root, None)
            print(f"panto: {root} is no longer trusted")
            return 0
        trust.set_trust(root, True)
    except ConfigError as e:
        usage_error(str(e), "panto trust")
    where = "" if (root / ".panto").is_dir() else " (it has no .panto/ yet)"
    print(f"panto: trusted {root}{where}: its .panto/ config, extensions and tools apply")
    return 0

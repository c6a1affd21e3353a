"""``panto rocks``: the luarocks shipped with panto, on panto's rock tree.

    panto rocks ARGS...          luarocks ARGS (install, remove, list, search, pack, ...)
    panto rocks admin ARGS...    luarocks-admin ARGS (make-manifest, add, ...)

Both run on panto's own Lua (``panto lua``) with ``--lua-version 5.4
--lua-dir T --tree T`` and panto's luarocks config, T being
``$PANTO_HOME/rocks/lua-5.4.8``: what they install is what extensions load.
A local rock server is a directory of ``.rock``/``.src.rock`` files indexed
with ``panto rocks admin make-manifest DIR``; install from it with
``panto rocks install NAME VERSION --only-server DIR``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

HELP = """\
usage: panto rocks ARGS...          luarocks ARGS, into panto's rock tree
       panto rocks admin ARGS...    luarocks-admin ARGS (make-manifest, add, ...)

The luarocks shipped with panto (run by `panto lua`; no system luarocks
needed) with --lua-version 5.4 --lua-dir T --tree T, T = {tree}.
Examples:
  panto rocks install lpeg 1.1.0-2          from luarocks.org (needs curl or wget)
  panto rocks install greet 1.0-1 --only-server DIR
  panto rocks pack greet-1.0-1.rockspec     make a .src.rock
  panto rocks admin make-manifest DIR       index a local rock server
  panto rocks list
`panto rocks help` shows luarocks' own help.  Set PANTO_LUAROCKS to run
another luarocks executable instead of panto's copy.
"""


def main(argv: Sequence[str] | None = None) -> int:
    import subprocess

    from panto.extensions.rocks import Rocks, RockTree

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(HELP.format(tree=RockTree.default().root))
        return 0
    admin = args[0] == "admin"
    if admin:
        args = args[1:]
    rocks = Rocks()
    if not admin and rocks.luarocks is None:
        print(f"panto rocks: {rocks.missing_hint}", file=sys.stderr)
        return 1
    env = rocks.env_for_command()
    env["PANTO_LUAROCKS_PROGNAME"] = "panto rocks admin" if admin else "panto rocks"
    try:
        return subprocess.call(rocks.command(*args, admin=admin), env=env)
    except KeyboardInterrupt:
        return 130
    except OSError as e:
        print(f"panto rocks: cannot run luarocks: {e}", file=sys.stderr)
        return 1

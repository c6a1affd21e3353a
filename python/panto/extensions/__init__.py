"""Extension policy and rocks: seed 002 (``[extensions]``) and seed 000's luarocks.

- :mod:`panto.extensions.policy` -- dotted globs, the layered allow/deny rule
  list and the two-pass load plan (pure Python, no Lua).
- :mod:`panto.extensions.vers` -- luarocks versions, constraints and
  dependency strings (a port of ``luarocks.core.vers``).
- :mod:`panto.extensions.rocks` -- ``$PANTO_HOME`` tree, the Lua prefix for
  luarocks, startup sync / update / bootstrap with the system ``luarocks``
  (a package: tree, toolchain, luarocks, sync, bootstrap).

Extension *loading* is :mod:`panto.lua.loader`; the argparse helpers of
``panto bootstrap``/``update`` are :mod:`panto.cli.rocks_args`.

Submodules are imported on use; importing this package costs nothing.
"""

from __future__ import annotations

__all__ = ["policy", "rocks", "vers"]

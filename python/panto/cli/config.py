"""``panto config``: the effective configuration and where each value came from.

Prints TOML-style ``key = value`` lines, each with ``# from LAYER (FILE)``:
the layer (base, user, project, env, cli, or default) that set it.  API keys
are shown only as ``<set>`` / ``<unset>``; header values that look secret as
``<set>``.

An untrusted project's keys that need trust (docs/security.md) are listed
at the end under ``# ignored:``, each with why it needs trust.

``panto config system-prompt`` prints the system prompt a new session in
this directory starts with, each part under a line naming where it came from
(panto.system_prompt).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from .common import load_config


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="panto config",
        description="Show the effective configuration: every value with the layer it came "
        "from (base < user < project < env < command line). API keys are never printed.",
    )
    p.add_argument(
        "keys",
        nargs="*",
        metavar="KEY",
        help="only these dotted keys (a table name shows everything under it); "
        "'system-prompt' prints the assembled system prompt and where each part came from; "
        "'sandbox' also reports the sandbox backend, Landlock ABI and network",
    )
    p.add_argument("-C", "--cwd", metavar="DIR", help="as if run in DIR (finds its project config)")
    p.add_argument("--files", action="store_true", help="only list the layer files")
    return p


def render(config: object, keys: Sequence[str] = (), env: dict[str, str] | None = None) -> str:
    from panto.config import Config

    assert isinstance(config, Config)
    rows = config.explain(env)
    if keys:
        rows = [r for r in rows if any(r[0] == k or r[0].startswith(k + ".") for k in keys)]
    width = min(max((len(f"{k} = {v}") for k, v, _ in rows), default=0), 60)
    lines = []
    for k, v, origin in rows:
        text = f"{k} = {v}"
        plain = not origin or origin == "built in" or origin.startswith("set ")
        note = origin if plain else f"from {origin}"
        lines.append(f"{text.ljust(width)}  # {note}" if note else text)
    return "\n".join(lines) + ("\n" if lines else "")


def layer_lines(config: object, cwd: str, env: dict[str, str] | None = None) -> list[str]:
    from panto.config import (
        BASE_CONFIG,
        ENV_VARS,
        Config,
        find_project_dir,
        user_config_file,
    )

    assert isinstance(config, Config)
    env = dict(os.environ) if env is None else env
    proj = find_project_dir(cwd, env)
    files = [
        ("base", BASE_CONFIG),
        ("user", user_config_file(env)),
        ("project", proj / "config.toml" if proj is not None else None),
    ]
    out = ["# layers, low to high precedence:"]
    for name, path in files:
        if path is None:
            out.append(f"#   {name:<8} (no .panto directory between here and the repository root)")
        else:
            state = "" if path.is_file() else "  (not found)"
            p = config.project
            if name == "project" and p is not None:
                state += f"  (trusted: {p.why})" if p.trusted else f"  ({p.why}: `panto trust`)"
            out.append(f"#   {name:<8} {path}{state}")
    used = [v for v in ENV_VARS if env.get(v)]
    out.append(f"#   {'env':<8} {', '.join(used) if used else '(no PANTO_* variables set)'}")
    out.append(f"#   {'cli':<8} command-line flags")
    return out


def ignored_lines(config: object, keys: Sequence[str] = ()) -> list[str]:
    """What an untrusted project set that does not apply, and why."""
    from panto.config import Config

    assert isinstance(config, Config)
    p = config.project
    if p is None or p.trusted or not p.ignored:
        return []
    rows = [
        (k, why)
        for k, why in p.ignored
        if not keys or any(k == q or k.startswith(q + ".") for q in keys)
    ]
    if not rows:
        return []
    width = max(len(k) for k, _ in rows)
    out = [f"# ignored: the project {p.root} is not trusted (`panto trust {p.root}` applies them)"]
    out += [f"#   {k.ljust(width)}  {why}" for k, why in rows]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
    config = load_config("panto config", cwd=cwd)
    out = sys.stdout
    if args.keys == ["system-prompt"]:
        return _system_prompt(config, cwd, out)
    if args.keys == ["sandbox"]:
        out.write(render(config, args.keys))
        out.write("\n".join(sandbox_lines(config, cwd)) + "\n")
        return 0
    if not args.keys:
        out.write("\n".join(layer_lines(config, cwd)) + "\n")
    if args.files:
        return 0
    if not args.keys:
        out.write("\n")
    text = render(config, args.keys)
    ignored = ignored_lines(config, args.keys)
    if args.keys and not text and not ignored:
        print(f"panto config: no such key: {', '.join(args.keys)}", file=sys.stderr)
        return 1
    out.write(text)
    if ignored:
        out.write(("\n" if text else "") + "\n".join(ignored) + "\n")
    return 0


def sandbox_lines(config: object, cwd: str) -> list[str]:
    """``panto config sandbox``: the backend this machine gives, the Landlock
    ABI, user namespaces and the network (the probe a first command runs)."""
    from panto.policy.sandbox import Sandbox

    sb = Sandbox.from_config(config, cwd)
    s = sb.settings
    rep = sb.report()
    if rep.backend == "bwrap":
        backend = f"bwrap ({rep.bwrap})"
    elif rep.backend == "landlock":
        backend = f"landlock (ABI {rep.landlock_abi}) + user, mount and network namespaces"
    else:
        backend = f"none: {rep.problem}"
    lines = [
        f"# backend:         {backend}"
        + ("" if s.backend == "auto" else f" (forced: {s.backend})"),
        f"# landlock:        {f'ABI {rep.landlock_abi}' if rep.landlock_abi else 'unavailable'}",
        f"# user namespaces: {'available' if rep.userns else 'unavailable'}",
    ]
    if rep.backend != "bwrap" and rep.bwrap_problem:
        lines.append(f"# bwrap:           {rep.bwrap_problem}")
    if not sb.enabled:
        lines.append("# mode off:        commands run unconfined, as panto does")
    else:
        lines.append(f"# network:         {'on' if s.network else 'off'} inside the sandbox")
        lines.append(f"# in effect:       {sb.describe()}")
    return lines


def _system_prompt(config: object, cwd: str, out: TextIO) -> int:
    """The prompt of a new session here: the tools of the extensions that
    load, the context files, the overrides (no session is written)."""
    from panto.app import open_session
    from panto.config import Config

    assert isinstance(config, Config)
    notes: list[str] = []
    with open_session(config, cwd=cwd, session=None, notify=notes.append) as s:
        for n in notes:
            print(f"panto config: {n}", file=sys.stderr)
        out.write(s.system_prompt.describe())
    return 0

"""The ``panto`` command.

``panto SUBCOMMAND ...`` runs a subcommand (a module in this package with a
``main(argv) -> int``); anything else -- no arguments, ``-p PROMPT``,
``--model ...`` -- is the agent, ``panto.cli.chat``.  Modules are imported
only when their command runs, so ``panto --version`` and ``panto decode``
start fast (they never import httpx or lupa).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

__all__ = ["COMMANDS", "main"]

#: subcommand -> (module, one-line summary)
COMMANDS: dict[str, tuple[str, str]] = {
    "decode": ("panto.cli.decode", "decode a captured SSE body into JSON events"),
    "sessions": ("panto.cli.sessions", "list and inspect saved sessions"),
    "config": ("panto.cli.config", "show the layered configuration"),
    "trust": ("panto.cli.trust", "trust a project's .panto/ (config, extensions, tools)"),
    "extensions": ("panto.cli.extensions", "list extension entries: source, state, deciding rule"),
    "serve": ("panto.cli.serve", "serve OpenAI/Anthropic-compatible APIs over panto's providers"),
    "mcp": ("panto.cli.mcp", "list, add or remove MCP servers"),
    "lua": ("panto.cli.lua", "a lua-compatible interpreter in panto's environment"),
    "rocks": ("panto.cli.rocks", "luarocks (shipped with panto) on panto's rock tree"),
    "bootstrap": ("panto.cli.bootstrap", "install the luarocks that extensions need"),
    "update": ("panto.cli.update", "reinstall the configured luarocks"),
}

CHAT_MODULE = "panto.cli.chat"

HELP = """\
usage: panto [options]                 interactive agent
       panto [options] PROMPT          interactive agent, PROMPT sent first
       panto -p PROMPT [options]       one-shot: answer PROMPT and exit
       panto COMMAND [args]            run a command (a first word that is a
                                       command's name; `panto -- WORDS` sends
                                       WORDS as a prompt)

panto is a minimal, fast, extensible coding agent.

Agent options (see `panto chat --help` for all of them):
  -p, --print PROMPT          run one prompt non-interactively
  --model PROVIDER/MODEL      e.g. anthropic/claude-sonnet-4-5, openai/gpt-4.1
  --output-format FORMAT      text | json | stream-json (with -p)
  --continue                  continue the most recent session here
  --resume [ID]               resume a session (pick one when ID is omitted)

Commands:
{commands}

Other:
  -h, --help                  show this help
  --version                   show panto's version

Run `panto COMMAND --help` for a command's options.
"""


def _help() -> str:
    lines = [f"  {name:<28}{summary}" for name, (_, summary) in COMMANDS.items()]
    return HELP.format(commands="\n".join(lines))


def _version() -> str:
    from panto import __version__

    try:
        from panto._ffi import version
    except ImportError as e:
        return f"panto {__version__} (core not loadable: {e})"
    return f"panto {__version__} (core {version()})"


def _load(module: str, what: str) -> object | None:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:  # the module exists but something it needs is missing
            raise
        print(
            f"panto: {what} is not available in this installation ({module} is missing)",
            file=sys.stderr,
        )
        return None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``panto`` console script; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(args)
    except KeyboardInterrupt as e:
        if argv is None:
            _quiet_shutdown()
        signals = sys.modules.get("panto.cli.signals")  # imported by the agent modes only
        if signals is not None and isinstance(e, signals.Terminated):  # SIGTERM / SIGHUP
            _say(f"panto: {e.name}: stopped; everything saved so far is kept")
            return e.exit_status
        return 130
    except BrokenPipeError:
        # `panto decode x.sse | head`: stop quietly, and keep Python from
        # complaining again while flushing stdout at exit.
        try:
            import os

            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 141
    finally:
        if argv is None:  # the process's own command line: it ends after this
            _quiet_shutdown()


def _quiet_shutdown() -> None:
    """What panto does after ``main`` -- the ``atexit`` handlers (the Lua
    runtime waits for a tool blocked in a read, the database pools close)
    and the joins of threads -- must not end in a traceback when a signal
    arrives meanwhile (a second Ctrl-C, a SIGTERM): from here on SIGINT,
    SIGTERM and SIGHUP end the process at once, with 128 + the signal's
    number.  Everything of the session was saved before ``main`` returned."""
    import os
    import signal

    def now(signum: int, frame: object) -> None:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(128 + signum)

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        num = getattr(signal, name, None)
        if num is not None:
            try:
                signal.signal(num, now)
            except (OSError, ValueError):  # not the main thread
                pass


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # SIGHUP: the terminal may be gone
        pass


def _mistyped_command(args: list[str]) -> bool:
    """``panto serv`` (alone, or before options): a command's name mistyped,
    not a one-word prompt for the agent; say so (True) instead of starting
    the agent and sending it.  ``panto -- serv`` sends it all the same."""
    word = args[0]
    if word.startswith("-") or len(word.split()) != 1 or len(word) > 16:
        return False  # an option, or a prompt of words (``panto "fix the test"``)
    if len(args) > 1 and not args[1].startswith("-"):
        return False
    import difflib

    close = difflib.get_close_matches(word, [*COMMANDS, "chat"], n=1, cutoff=0.85)
    if not close:
        return False
    _say(
        f"panto: {word!r} is not a command; did you mean `panto {close[0]}`? "
        f"(`panto -- {word}` sends it to the agent as a prompt)"
    )
    return True


def _dispatch(args: list[str]) -> int:
    if args and args[0] in ("-h", "--help", "help") and len(args) == 1:
        sys.stdout.write(_help())
        return 0
    if args == ["--version"] or args == ["-V"]:
        print(_version())
        return 0
    from ..startup_cache import (
        defer_inspect_import,
        defer_urllib_parse_import,
        install_dataclass_code_cache,
        pause_gc,
        resume_gc,
    )

    pause_gc()  # until the agent is built (chat.main) or a command runs (see there)
    try:
        defer_urllib_parse_import()  # before pathlib imports it (see there)
        defer_inspect_import()  # before dataclasses imports it (see there)
        install_dataclass_code_cache()  # ~20 ms less CPU at start-up (see there)
        if args and args[0] in COMMANDS:
            module, _ = COMMANDS[args[0]]
            mod = _load(module, f"`panto {args[0]}`")
            if mod is None:
                return 2
            resume_gc()
            return int(mod.main(args[1:]) or 0)  # type: ignore[attr-defined]
        if args and args[0] == "chat":
            args = args[1:]
        elif args and _mistyped_command(args):
            return 2
        mod = _load(CHAT_MODULE, "the agent (`panto` / `panto -p`)")
        if mod is None:
            return 2
        return int(mod.main(args) or 0)  # type: ignore[attr-defined]
    finally:
        resume_gc()

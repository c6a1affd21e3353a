"""``panto`` (interactive) and ``panto -p PROMPT`` (one-shot): the options
and the choice of mode.

- ``panto.cli.oneshot``: ``-p`` with ``--output-format text|json|stream-json``;
- ``panto.cli.repl``: the interactive mode;
- ``panto.cli.render``: how events become terminal text;
- ``panto.app.open_session``: builds the agent, its session store, its
  extensions and its system prompt (the one composition root);
- ``panto.cli.signals``: SIGTERM/SIGHUP end panto cleanly (exit 128+N).

Both modes load the Lua runtime (``panto.lua``) as the ``panto-lua`` tool
source and hooks, unless lupa is missing (one warning, then no Lua tools):
the built-in ``std`` tools plus user and project extensions
(``--no-extensions`` skips the latter, ``--deny GLOB`` turns entries off).
See docs/cli.md.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..config.schema import PERMISSION_MODES
from ..errors import ConfigError, PantoError
from . import signals
from .common import load_config, one_line_warnings, usage_error, valid_text, warn
from .oneshot import FORMATS, one_shot

if TYPE_CHECKING:
    import argparse

    from ..config import Config

__all__ = ["main", "build_parser", "parse_args"]


def _columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else stdout's
    terminal, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def build_parser() -> argparse.ArgumentParser:
    import argparse

    class _Formatter(argparse.HelpFormatter):
        """argparse's help layout, the terminal's width read without importing
        shutil (argparse imports it for that: ~3 ms of every start-up)."""

        def __init__(self, prog: str, **kw: Any) -> None:
            if kw.get("width") is None:
                kw["width"] = _columns() - 2
            super().__init__(prog, **kw)

    p = argparse.ArgumentParser(
        prog="panto",
        description="panto: a minimal, fast, extensible coding agent.",
        formatter_class=_Formatter,
    )
    p.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="PROMPT",
        help="answer PROMPT and exit ('-' reads it from stdin)",
    )
    p.add_argument(
        "first_prompt",
        nargs="*",
        metavar="PROMPT",
        help="start the interactive mode with PROMPT as the first prompt (words are joined "
        "with spaces; a first word that is a command, such as sessions, runs the command: "
        "quote the prompt, or put -- before it)",
    )
    p.add_argument(
        "--output-format",
        choices=FORMATS,
        default=None,
        help="output of -p (default: text)",
    )
    p.add_argument(
        "--model",
        metavar="PROVIDER/MODEL",
        help="e.g. anthropic/claude-sonnet-4-5, openai/gpt-4.1, ollama/qwen3, "
        "mock/anthropic (offline)",
    )
    p.add_argument("--base-url", metavar="URL", help="the provider's base URL")
    p.add_argument(
        "--max-turns",
        type=int,
        metavar="N",
        help="at most N model responses per prompt (N-1 tool rounds)",
    )
    p.add_argument("--max-tokens", type=int, metavar="N", help="output token limit per response")
    p.add_argument(
        "--system-prompt",
        metavar="TEXT",
        help="replaces the built-in base of the system prompt (AGENTS.md etc. stay)",
    )
    p.add_argument(
        "--append-system-prompt", metavar="TEXT", help="text appended to the system prompt"
    )
    p.add_argument(
        "--thinking-budget", type=int, metavar="TOKENS", help="Anthropic extended thinking budget"
    )
    p.add_argument(
        "--reasoning-effort",
        metavar="LEVEL",
        help="OpenAI reasoning_effort (minimal, low, medium, high)",
    )
    p.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        metavar="MODE",
        help="default (ask before bash and file changes), accept-edits, plan (read-only), "
        "dont-ask (deny what would ask), bypass; see docs/security.md",
    )
    p.add_argument(
        "--no-extensions",
        action="store_true",
        help="skip user and project Lua extensions (the built-in std tools stay; "
        "use --deny 'std.*' to drop those too)",
    )
    p.add_argument(
        "--deny",
        action="append",
        default=[],
        metavar="GLOB",
        help="turn off extension entries by dotted name, e.g. std.bash, 'std.*', "
        "'me.**' (repeatable)",
    )
    p.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the most recent session of this directory",
    )
    p.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="resume session ID (or a unique id prefix); without ID, pick from a list",
    )
    p.add_argument(
        "--at",
        metavar="ENTRY",
        help="with --resume/--continue: continue from this entry of the session's tree "
        "(a prompt: its successor becomes a sibling; see panto sessions tree ID)",
    )
    p.add_argument(
        "--fork",
        metavar="ID[:ENTRY]",
        help="copy session ID (its path to ENTRY, default its current leaf) into a new "
        "session and continue there",
    )
    p.add_argument(
        "--no-session", action="store_true", help="do not save this conversation to disk"
    )
    p.add_argument(
        "--debug",
        action="store_true",
        help="log requests and retries to stderr (keys are redacted)",
    )
    return p


class Args:
    """The parsed options (what ``build_parser().parse_args`` gives, read
    by attribute); :func:`parse_args` builds one without argparse for the
    common command lines."""

    def __init__(self) -> None:
        # the defaults of build_parser(): tests/integration pins them equal
        self.prompt: str | None = None
        self.first_prompt: list[str] = []
        self.output_format: str | None = None
        self.model: str | None = None
        self.base_url: str | None = None
        self.max_turns: int | None = None
        self.max_tokens: int | None = None
        self.system_prompt: str | None = None
        self.append_system_prompt: str | None = None
        self.thinking_budget: int | None = None
        self.reasoning_effort: str | None = None
        self.permission_mode: str | None = None
        self.no_extensions = False
        self.deny: list[str] = []
        self.continue_ = False
        self.resume: str | None = None
        self.at: str | None = None
        self.fork: str | None = None
        self.no_session = False
        self.debug = False


#: option -> attribute, for the options the fast path reads (each spelled out
#: in full: an abbreviation such as ``--mod`` goes to argparse)
_FAST_FLAGS = {
    "--no-extensions": "no_extensions",
    "--continue": "continue_",
    "--no-session": "no_session",
    "--debug": "debug",
}
_FAST_VALUES = {
    "-p": "prompt",
    "--print": "prompt",
    "--output-format": "output_format",
    "--model": "model",
    "--base-url": "base_url",
    "--system-prompt": "system_prompt",
    "--append-system-prompt": "append_system_prompt",
    "--reasoning-effort": "reasoning_effort",
    "--permission-mode": "permission_mode",
    "--at": "at",
    "--fork": "fork",
}
_FAST_INTS = {
    "--max-turns": "max_turns",
    "--max-tokens": "max_tokens",
    "--thinking-budget": "thinking_budget",
}


def _fast_args(argv: Sequence[str]) -> Args | None:
    """``argv`` parsed without argparse (~4 ms of imports, and gettext's
    look-ups of translations at every parse) when it is only options of the
    forms argparse reads the same way: ``--flag``, ``--opt VALUE`` with the
    option spelled out and a VALUE that cannot be taken for an option (it
    does not start with ``-``, or is ``-``).  None for anything else
    (``--help``, ``--opt=VALUE``, ``-pVALUE``, abbreviations, ``--resume``,
    a bad choice or number, an error): argparse parses those, its messages
    unchanged."""
    args = Args()
    i, n = 0, len(argv)
    while i < n:
        opt = argv[i]
        attr = _FAST_FLAGS.get(opt)
        if attr is not None:
            setattr(args, attr, True)
            i += 1
            continue
        if i + 1 >= n:
            return None
        value = argv[i + 1]
        if value.startswith("-") and value != "-":
            return None
        if opt in _FAST_VALUES:
            if opt == "--output-format" and value not in FORMATS:
                return None
            if opt == "--permission-mode" and value not in PERMISSION_MODES:
                return None
            setattr(args, _FAST_VALUES[opt], value)
        elif opt in _FAST_INTS:
            try:
                setattr(args, _FAST_INTS[opt], int(value))  # argparse's type=int
            except ValueError:
                return None
        elif opt == "--deny":
            args.deny.append(value)
        else:
            return None
        i += 2
    return args


def parse_args(argv: Sequence[str]) -> Args | argparse.Namespace:
    """The options of ``argv``: :func:`_fast_args`, else argparse (which
    exits with status 2 and its usage message on an error)."""
    return _fast_args(argv) or build_parser().parse_args(list(argv))


def _config(args: Args | argparse.Namespace) -> Config:
    overrides: dict[str, Any] = {}
    if args.max_tokens is not None:
        overrides["max_tokens"] = args.max_tokens
    if args.thinking_budget is not None:
        overrides["thinking_budget"] = args.thinking_budget
    if args.reasoning_effort is not None:
        overrides["reasoning_effort"] = args.reasoning_effort
    if args.max_turns is not None:
        if args.max_turns < 1:
            usage_error("--max-turns must be at least 1")
        overrides["max_tool_rounds"] = args.max_turns - 1
    config = load_config(**overrides)
    if args.max_turns is not None:  # the turn's stop note names the flag, not the key
        from ..config.layers import Origin

        config.origins["max_tool_rounds"] = Origin("cli", MAX_TURNS_FLAG)
    from ..config import split_model

    deferred = False
    try:
        if args.model:
            if split_model(args.model)[0] in config.providers or args.no_extensions:
                config = config.with_model(args.model)
            else:  # maybe an extension's provider: resolved once extensions load (open_session)
                deferred = True
        if args.base_url:
            from ..config.schema import URL_EXPECTED, url_problem

            problem = url_problem(args.base_url)
            if problem:
                usage_error(
                    f"--base-url: expected {URL_EXPECTED}, got {args.base_url!r} ({problem})"
                )
            config.base_url = args.base_url
        if not deferred:
            config.resolve_api_key()  # fail early, naming the variable to set
    except ConfigError as e:
        usage_error(str(e))
    return config


def _session_spec(args: Args | argparse.Namespace, config: Config) -> Any:
    """What ``panto.app.open_session`` gets as ``session``; exits 2 on a
    usage error (an unknown ``--resume`` id), 1 when the pick is cancelled."""
    if args.no_session:
        if args.continue_ or args.resume is not None or args.fork or args.at:
            usage_error("--no-session cannot be combined with --continue, --resume, --fork or --at")
        return None
    if sum((args.continue_, args.resume is not None, args.fork is not None)) > 1:
        usage_error("use one of --continue, --resume and --fork")
    if args.at and not (args.continue_ or args.resume is not None):
        usage_error("--at needs --resume ID or --continue (--fork takes ID:ENTRY)")
    if args.continue_:
        return "continue"
    if args.resume is None and args.fork is None:
        return "new"
    from ..errors import SessionError
    from ..sessions import fork_session, open_backend

    try:
        backend = open_backend(config)
        if args.fork is not None:
            ident, _, entry = args.fork.partition(":")
            new = fork_session(backend, ident, entry or None, cwd=os.getcwd())
            print(f"panto: forked session {new[:8]} from {ident}", file=sys.stderr)
            return ("resume", backend.resolve(new))
        if args.resume:
            return ("resume", backend.resolve(args.resume))
        from .sessions import pick_session

        infos = backend.list(os.getcwd())[:20]
    except SessionError as e:  # no such id, or an ambiguous prefix
        usage_error(str(e))
    picked = pick_session(infos, dir=config.session_dir)
    if picked is None:
        print("panto: no session chosen", file=sys.stderr)
        raise SystemExit(1)
    return ("resume", os.fspath(picked))


#: the origin of ``max_tool_rounds`` set by ``--max-turns`` (see agent/turn.py)
MAX_TURNS_FLAG = "--max-turns"

#: what panto says when it would fall back to the mock provider unasked
NO_KEY = (
    "no API key (set ANTHROPIC_API_KEY or OPENAI_API_KEY) and no model chosen "
    "(--model, PANTO_MODEL, model = in the config)"
)


def _implicit_mock(config: Config, args: Args | argparse.Namespace) -> bool:
    """Whether the offline mock was chosen only because no key and no model
    is set (not by ``--model``, ``PANTO_MODEL`` or a config file)."""
    origin = config.origins.get("model")
    return (
        not args.model
        and config.provider_config.mock
        and origin is not None
        and origin.layer == "default"
    )


def _check_args(args: Args | argparse.Namespace) -> None:
    """Usage errors argparse does not catch (exit 2)."""
    if args.first_prompt and args.prompt is not None:
        extra = " ".join(args.first_prompt)
        usage_error(
            f"-p takes the prompt as one argument; {extra!r} is more: quote the whole "
            "prompt (-p 'fix the test'), or drop -p to start the interactive mode with it"
        )
    if args.first_prompt and not " ".join(args.first_prompt).strip():
        usage_error("the first prompt is empty")
    if args.prompt is None:
        if args.output_format is not None:
            usage_error("--output-format needs -p PROMPT (the interactive mode prints text)")
        return
    if args.prompt != "-" and not args.prompt.strip():
        usage_error("-p: the prompt is empty")


def _debug_logging() -> None:
    from ..logs import logging_module

    logging = logging_module()  # the redaction installed first (panto.logs)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("panto %(levelname)s %(message)s"))
    log = logging.getLogger("panto")
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    _check_args(args)
    debug = bool(args.debug or os.environ.get("PANTO_DEBUG"))
    if debug:
        _debug_logging()
    one_line_warnings(debug)
    signals.install()
    config = _config(args)
    prompt: str | None = None
    if args.prompt is not None:
        prompt = valid_text(sys.stdin.read() if args.prompt == "-" else args.prompt)
        if not prompt.strip():
            usage_error("-p -: the prompt read from stdin is empty")
    elif _ask_trust(config):
        config = _config(args)  # again, the project trusted now
    if _implicit_mock(config, args):
        if prompt is not None:  # a script with a missing secret must not "pass"
            usage_error(f"{NO_KEY}; --model mock/anthropic runs the offline mock")
        warn(f"{NO_KEY}: this is the offline mock model, which echoes")
    from ..app import open_session

    try:
        session = open_session(
            config,
            session=_session_spec(args, config),
            model=args.model,
            extensions="builtin" if args.no_extensions else True,
            deny=args.deny,
            system_prompt=args.system_prompt,
            append_system_prompt=args.append_system_prompt,
            notify=warn,
            permission_mode=args.permission_mode,
        )
    except ConfigError as e:
        usage_error(str(e))
    except PantoError as e:  # e.g. the session is open in another panto process
        print(f"panto: {e}", file=sys.stderr)
        return 1
    from ..startup_cache import resume_gc

    resume_gc()  # start-up is over (panto.cli paused the collector)
    agent, loaded = session.agent, session.loaded
    if args.at and loaded is not None:
        try:
            loaded = agent.branch_from(args.at)
        except PantoError as e:
            print(f"panto: --at: {e}", file=sys.stderr)
            session.close()
            return 1
    if loaded is not None:
        _say_resumed(session.store.session_id, loaded)
    try:
        if prompt is not None:
            from ..skills import expand_command

            try:
                prompt = expand_command(session.skills, prompt) or prompt
            except LookupError as e:
                print(f"panto: {e}", file=sys.stderr)
                return 2
            return one_shot(agent, prompt, args.output_format or "text")
        from ..agent import Session
        from ..sessions import FSJSONLStore, open_backend
        from .repl import Interactive, prompt_of

        saved = isinstance(session.store, FSJSONLStore) or hasattr(session.store, "tree")
        interactive = Interactive(
            agent,
            session.extensions,
            prefill=prompt_of(loaded) if loaded is not None else None,
            system_prompt=session.system_prompt,
            skills=session.skills,
            mcp=session.mcp,
            # /clear starts a fresh session in the configured store; a failed
            # turn's prompt is taken out by reloading the session
            session=Session(agent, backend=open_backend(config) if saved else None),
        )
        return interactive.loop(valid_text(" ".join(args.first_prompt)) or None)
    finally:
        agent.close()
        if session.mcp is not None:
            session.mcp.close()
        if agent.store is not None:  # /clear and a failed turn may have replaced it
            agent.store.close()
        if agent.store is not session.store:
            session.store.close()


def _ask_trust(config: Config) -> bool:
    """The REPL's question, once per project (the answer is stored), when it
    starts on a terminal in an untrusted project whose ``.panto/`` sets
    something that needs trust.  True when the user trusted it."""
    p = config.project
    if p is None or p.trusted or not p.ignored or not sys.stdin.isatty():
        return False
    from ..policy import trust

    try:
        if trust.lookup(p.root) is not None:  # asked before: the user said no
            return False
        lines = [f"panto: {p.root} has a .panto/ you have not trusted yet. It sets:"]
        lines += [f"  {key}  ({why})" for key, why in p.ignored]
        lines.append(
            "Trust this project? Then the above applies here from now on "
            "(`panto trust --revoke` undoes it). [y/N] "
        )
        sys.stderr.write("\n".join(lines))
        sys.stderr.flush()
        answer = sys.stdin.readline()  # Ctrl-C: panto exits (status 130)
        yes = answer.strip().lower() in ("y", "yes")
        if answer:  # an answer (not end of input) is remembered
            trust.set_trust(p.root, yes)
    except ConfigError as e:  # an unreadable trust store
        usage_error(str(e))
    return yes


def _say_resumed(session_id: str, loaded: Any) -> None:
    print(
        f"panto: resumed session {session_id[:8]} ({len(loaded.conversation)} messages)",
        file=sys.stderr,
    )
    if loaded.dangling_user is not None:
        from ..images import typed_text

        msg = loaded.dangling_message
        text = typed_text(msg) if msg is not None else loaded.dangling_user
        short = text.strip().replace("\n", " ")[:80]
        print(
            f"panto: your last prompt had no reply and was not resent: {short!r}", file=sys.stderr
        )

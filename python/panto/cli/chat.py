"""``panto`` (interactive) and ``panto -p PROMPT`` (one-shot).

One-shot output formats (``--output-format``):

- ``text``: the answer's text, streamed to stdout; tool calls as one-line
  summaries and errors on stderr.
- ``json``: one JSON object when the turn ends (``{"type": "result", ...}``).
- ``stream-json``: one JSON object per line per event
  (``panto.events.event_to_dict``), then a ``result`` (or ``error``) line.

The interactive mode is a plain prompt with readline history: streamed
output, thinking dimmed on a terminal, one-line tool summaries, token usage
after each turn, ``/help /model /clear /compact /sessions /tools /extensions
/exit``, plus the slash commands Lua extensions register.  Ctrl-C cancels the
running turn (tools included); Ctrl-C twice or Ctrl-D at an empty prompt exits.

Both modes load the Lua runtime (``panto.lua``) as the ``panto-lua`` tool
source and hooks, unless lupa is missing (one warning, then no Lua tools):
the built-in ``std`` tools plus user and project extensions
(``--no-extensions`` skips the latter, ``--deny GLOB`` turns entries off).
See docs/cli.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any

from ..agent import Agent
from ..config import Config
from ..conversation import Message, Usage
from ..errors import ConfigError, PantoError, ProviderError
from ..events import (
    BlockComplete,
    BlockStart,
    ContentDelta,
    MessageComplete,
    ProviderRetry,
    ToolCallStart,
    ToolResult,
    event_to_dict,
)

if TYPE_CHECKING:
    from ..lua import LoadReport, LuaToolSource
    from ..sessions import LoadedSession, SessionStore

__all__ = ["main", "build_parser", "Extensions", "load_extensions"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="panto",
        description="panto: a minimal, fast, extensible coding agent.",
    )
    p.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="PROMPT",
        help="answer PROMPT and exit ('-' reads it from stdin)",
    )
    p.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
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
    p.add_argument("--system-prompt", metavar="TEXT", help="the system prompt")
    p.add_argument(
        "--thinking-budget", type=int, metavar="TOKENS", help="Anthropic extended thinking budget"
    )
    p.add_argument(
        "--reasoning-effort",
        metavar="LEVEL",
        help="OpenAI reasoning_effort (minimal, low, medium, high)",
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
        "--no-session", action="store_true", help="do not save this conversation to disk"
    )
    p.add_argument(
        "--debug",
        action="store_true",
        help="log requests and retries to stderr (keys are redacted)",
    )
    return p


def _config(args: argparse.Namespace) -> Config:
    overrides: dict[str, Any] = {}
    if args.max_tokens is not None:
        overrides["max_tokens"] = args.max_tokens
    if args.system_prompt is not None:
        overrides["system_prompt"] = args.system_prompt
    if args.thinking_budget is not None:
        overrides["thinking_budget"] = args.thinking_budget
    if args.reasoning_effort is not None:
        overrides["reasoning_effort"] = args.reasoning_effort
    if args.max_turns is not None:
        if args.max_turns < 1:
            raise ConfigError("--max-turns must be at least 1")
        overrides["max_tool_rounds"] = args.max_turns - 1
    config = Config.load(**overrides)
    if args.model:
        config = config.with_model(args.model)
    if args.base_url:
        config.base_url = args.base_url
    return config


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.debug or os.environ.get("PANTO_DEBUG"):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("panto %(levelname)s %(message)s"))
        log = logging.getLogger("panto")
        log.addHandler(handler)
        log.setLevel(logging.DEBUG)
    try:
        config = _config(args)
        config.resolve_api_key()  # fail early, naming the variable to set
    except ConfigError as e:
        print(f"panto: {e}", file=sys.stderr)
        return 2
    try:
        opened = open_session(args, config)
    except PantoError as e:
        print(f"panto: {e}", file=sys.stderr)
        return 1
    if opened is None:
        return 1
    store, loaded = opened
    if loaded is not None and args.model is None and store.active_model is not None:
        try:
            config = config.with_model(str(store.active_model))
        except ConfigError as e:
            warn(f"session model {store.active_model} unavailable ({e}); using {config.model}")
    if store.active_model is None or tuple(store.active_model) != (config.provider, config.model):
        store.append_model_change(config.provider, config.model)
    agent = Agent(config, store=store, conversation=loaded.conversation if loaded else None)
    try:
        ext = load_extensions(agent, no_extensions=args.no_extensions, deny=args.deny)
        agent.start_session(session_id=store.session_id, resumed=loaded is not None)
        if args.prompt is not None:
            prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
            return one_shot(agent, prompt, args.output_format)
        from ..sessions import FSJSONLStore

        interactive = Interactive(agent, ext)
        if isinstance(store, FSJSONLStore):
            durability = config.session_durability
            sdir = config.session_dir

            def new_store() -> SessionStore:
                return FSJSONLStore(sdir, os.getcwd(), durability=durability)  # type: ignore[arg-type]

            interactive.new_store = new_store
        return interactive.loop()
    finally:
        agent.close()
        store.close()


# -- sessions ----------------------------------------------------------------------------


def open_session(
    args: argparse.Namespace, config: Config
) -> tuple[SessionStore, LoadedSession | None] | None:
    """The store for this run: a new session, the one ``--continue`` or
    ``--resume`` names, or a NullStore with ``--no-session``.  Returns None
    when the user cancelled the pick; raises SessionError (e.g. the session
    is locked by another process, naming its pid)."""
    from ..sessions import (
        FSJSONLStore,
        NullStore,
        find_most_recent_session,
        list_sessions,
        resolve_session_id,
    )

    cwd = os.getcwd()
    durability = config.session_durability
    sdir = config.session_dir
    if args.no_session:
        if args.continue_ or args.resume is not None:
            raise ConfigError("--no-session cannot be combined with --continue or --resume")
        return NullStore(), None
    path = None
    if args.continue_:
        path = find_most_recent_session(cwd, dir=sdir)
        if path is None:
            print(
                "panto: no earlier session in this directory; starting a new one", file=sys.stderr
            )
    elif args.resume is not None:
        if args.resume:
            path = resolve_session_id(args.resume, dir=sdir)
        else:
            from .sessions import pick_session

            path = pick_session(list_sessions(dir=sdir, cwd=cwd)[:20], dir=sdir)
            if path is None:
                print("panto: no session chosen", file=sys.stderr)
                return None
    if path is None:
        return FSJSONLStore(sdir, cwd, durability=durability), None  # type: ignore[arg-type]
    store = FSJSONLStore.open(path, durability=durability)  # type: ignore[arg-type]
    loaded = store.load_conversation()
    print(
        f"panto: resumed session {store.session_id[:8]} ({len(loaded.conversation)} messages)",
        file=sys.stderr,
    )
    if loaded.dangling_user is not None:
        short = loaded.dangling_user.strip().replace("\n", " ")[:80]
        print(
            f"panto: your last prompt had no reply and was not resent: {short!r}", file=sys.stderr
        )
    return store, loaded


# -- extensions (the Lua runtime) --------------------------------------------------------


def warn(msg: str) -> None:
    print(f"panto: warning: {msg}", file=sys.stderr, flush=True)


class Extensions:
    """What start-up loaded: the ``panto-lua`` source and its load report
    (both None when Lua is unavailable), and why not (``error``)."""

    def __init__(
        self,
        source: LuaToolSource | None = None,
        report: LoadReport | None = None,
        error: str | None = None,
    ) -> None:
        self.source = source
        self.report = report
        self.error = error

    def commands(self) -> dict[str, str]:
        """Lua-registered slash commands: name (without ``/``) -> description."""
        return self.source.commands() if self.source is not None else {}

    def run_command(self, name: str, args: str) -> str:
        assert self.source is not None
        return self.source.run_command(name, args)


def lua_config(config: Config) -> dict[str, Any]:
    """The mapping extensions see as ``panto.config`` (never an API key):
    ``Config.lua_view()`` when the config has one (TOML layering), else the
    model and the tool timeout."""
    view = getattr(config, "lua_view", None)
    if callable(view):
        return dict(view())
    tools: dict[str, Any] = {}
    if config.tool_timeout is not None:
        tools["timeout"] = config.tool_timeout
    return {"model": config.model_spec, "provider": config.provider, "tools": tools}


def load_extensions(
    agent: Agent,
    *,
    no_extensions: bool = False,
    deny: Sequence[str] = (),
    cwd: str | None = None,
) -> Extensions:
    """Start the Lua runtime, load extensions and register the ``panto-lua``
    source and its hooks with ``agent``.  Never fatal: problems are warnings
    on stderr and panto carries on with what loaded (or without Lua)."""
    try:
        import panto.lua as plua  # cheap: lupa loads when the runtime starts

        src, report = plua.create_source(
            cwd=cwd or os.getcwd(),
            no_extensions=no_extensions,
            deny=list(deny),
            config=lua_config(agent.config),
        )
    except ImportError as e:
        return _no_lua(f"Lua extensions are unavailable ({e}); install panto[lua] for them")
    except Exception as e:  # noqa: BLE001 - lupa missing or broken, a bad runtime
        cause = e.__cause__ if isinstance(e.__cause__, ImportError) else None
        if cause is not None:
            return _no_lua(f"Lua extensions are unavailable ({cause}); install panto[lua] for them")
        return _no_lua(f"Lua extensions are unavailable: {e}")
    for err in report.errors:
        warn(f"extension: {err}")
    try:
        agent.register_tool_source(src)
    except PantoError as e:
        warn(f"Lua tools not registered: {e}")
        return Extensions(None, report, str(e))
    agent.add_hooks(src.hooks)
    return Extensions(src, report)


def _no_lua(msg: str) -> Extensions:
    warn(msg + "; continuing without Lua tools")
    return Extensions(None, None, msg)


# -- rendering ------------------------------------------------------------------------

_DIM, _RED, _BOLD, _RESET = "\x1b[2m", "\x1b[31m", "\x1b[1m", "\x1b[0m"


def _one_line(s: str, width: int = 80) -> str:
    s = " ".join(s.split())
    return s if len(s) <= width else s[: width - 1] + "…"


def tool_summary(ev: ToolCallStart) -> str:
    args = json.dumps(ev.call.input, ensure_ascii=False) if ev.call.input else ""
    return f"⚙ {ev.call.name}({_one_line(args, 70)})"


def result_summary(ev: ToolResult) -> str:
    lines = ev.content.count("\n") + 1 if ev.content else 0
    mark = "✗" if ev.is_error else "↳"
    more = f" (+{lines - 1} lines)" if lines > 1 else ""
    return f"  {mark} {_one_line(ev.content, 70) or '(empty)'}{more}"


def usage_line(usage: Usage, seconds: float) -> str:
    parts = [f"in {usage.input_tokens:,}"]
    if usage.cache_read_tokens or usage.cache_write_tokens:
        parts.append(f"cache {usage.cache_read_tokens:,}r/{usage.cache_write_tokens:,}w")
    out = f"out {usage.output_tokens:,}"
    if usage.reasoning_tokens:
        out += f" ({usage.reasoning_tokens:,} reasoning)"
    parts.append(out)
    return " · ".join(parts) + f" · {seconds:.1f}s"


class Renderer:
    """Writes a turn's events as text: answer text to ``out``; thinking
    (dimmed, when ``show_thinking``), tool summaries, retries and errors to
    ``err``."""

    def __init__(self, out: IO[str], err: IO[str], *, color: bool, show_thinking: bool):
        self.out, self.err = out, err
        self.color = color
        self.show_thinking = show_thinking
        self.col0 = True  # the cursor is at the start of a line (on out)

    def _c(self, code: str, s: str) -> str:
        return f"{code}{s}{_RESET}" if self.color else s

    def _write(self, s: str) -> None:
        if s:
            self.out.write(s)
            self.col0 = s.endswith("\n")

    def newline(self) -> None:
        if not self.col0:
            self._write("\n")
        self.out.flush()

    def note(self, s: str, code: str = _DIM) -> None:
        """A line on the side channel."""
        if self.err is self.out:
            self.newline()
        self.err.write(self._c(code, s) + "\n")
        self.err.flush()

    def event(self, ev: Any) -> None:
        tp = type(ev)
        if tp is ContentDelta:
            if ev.kind == "text":
                self._write(ev.text)
                self.out.flush()
            elif ev.kind == "thinking" and self.show_thinking:
                self._write(self._c(_DIM, ev.text))
                self.out.flush()
        elif tp is BlockStart:
            if ev.kind in ("text", "thinking"):
                self.newline()
        elif tp is BlockComplete:
            self.newline()
        elif tp is ToolCallStart:
            self.note(tool_summary(ev))
        elif tp is ToolResult:
            self.note(result_summary(ev), _RED if ev.is_error else _DIM)
        elif tp is ProviderRetry:
            self.note(f"retrying in {ev.delay:.1f}s (attempt {ev.attempt}): {ev.reason}")
        elif tp is MessageComplete:
            self.newline()
            if ev.message.error:
                self.note(ev.message.error, _RED)


# -- one-shot ---------------------------------------------------------------------------


def _error_dict(e: BaseException) -> dict[str, Any]:
    d: dict[str, Any] = {"message": str(e), "kind": type(e).__name__}
    if isinstance(e, ProviderError):
        d.update(status=e.status, type=e.type, retryable=e.retryable)
    return d


def _result(
    agent: Agent, stream: Any, started: float, final: MessageComplete | None
) -> dict[str, Any]:
    msg: Message | None = final.message if final else None
    return {
        "type": "result",
        "is_error": msg is None or msg.error is not None,
        "result": msg.text if msg else "",
        "stop_reason": final.stop_reason if final else None,
        "error": msg.error if msg else None,
        "model": agent.config.model_spec,
        "usage": stream.usage.to_dict(),
        "duration_ms": round((time.perf_counter() - started) * 1000),
        "rounds": stream.rounds + 1,
        "messages": [m.to_dict() for m in stream.messages],
    }


def one_shot(agent: Agent, prompt: str, fmt: str) -> int:
    out = sys.stdout
    agent.submit_user_message(prompt)
    started = time.perf_counter()
    final: MessageComplete | None = None
    renderer = Renderer(out, sys.stderr, color=sys.stderr.isatty(), show_thinking=False)
    stream = agent.run()
    try:
        with stream:
            for ev in stream:
                if type(ev) is MessageComplete and ev.final:
                    final = ev
                if fmt == "stream-json":
                    out.write(json.dumps(event_to_dict(ev), ensure_ascii=False) + "\n")
                    out.flush()
                elif fmt == "text":
                    renderer.event(ev)
    except PantoError as e:
        if fmt == "text":
            renderer.newline()
            print(f"panto: error: {e}", file=sys.stderr)
        else:
            doc: dict[str, Any] = {"type": "error", "error": _error_dict(e)}
            doc["model"] = agent.config.model_spec
            if fmt == "json":
                doc["messages"] = [m.to_dict() for m in stream.messages]
            out.write(json.dumps(doc, ensure_ascii=False) + "\n")
        return 1
    except KeyboardInterrupt:
        renderer.newline()
        print("panto: cancelled", file=sys.stderr)
        return 130
    result = _result(agent, stream, started, final)
    if fmt in ("json", "stream-json"):
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
    else:
        renderer.newline()
    out.flush()
    return 1 if result["is_error"] else 0


# -- interactive ------------------------------------------------------------------------------

#: Built-in slash commands: name -> (arguments, description).  Lua commands
#: with one of these names are shadowed (a warning says so at start-up).
BUILTIN_COMMANDS: dict[str, tuple[str, str]] = {
    "help": ("", "this help"),
    "model": ("[P/MODEL]", "show or switch the model (e.g. /model anthropic/claude-sonnet-4-5)"),
    "clear": ("", "start a new conversation"),
    "compact": ("[INSTRUCTIONS]", "replace the conversation with a summary (frees context)"),
    "sessions": ("", "list this directory's saved sessions (resume one with panto --resume ID)"),
    "tools": ("", "list the tools the model can call, with their owners"),
    "extensions": ("", "list the Lua extension entries: source, and whether active"),
    "exit": ("", "quit (also Ctrl-D)"),
}

HELP_FOOTER = "Ctrl-C cancels a running turn; Ctrl-C twice at an empty prompt exits."


def help_text(lua_commands: dict[str, str] | None = None) -> str:
    usage = {n: n + (" " + a if a else "") for n, (a, _) in BUILTIN_COMMANDS.items()}
    w = max(map(len, usage.values())) + 1
    lines = [f"/{usage[n]:<{w}} {d}" for n, (_, d) in BUILTIN_COMMANDS.items()]
    extra = {n: d for n, d in (lua_commands or {}).items() if n not in BUILTIN_COMMANDS}
    if extra:
        lines.append("extension commands:")
        lines += [f"/{n:<{w}} {_one_line(d, 56)}" for n, d in sorted(extra.items())]
    lines.append(HELP_FOOTER)
    return "\n".join(lines)


HELP = help_text()


def _history_file() -> str:
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return os.path.join(state, "panto", "history")


class Interactive:
    def __init__(self, agent: Agent, ext: Extensions | None = None) -> None:
        self.agent = agent
        self.ext = ext if ext is not None else Extensions()
        # makes the fresh session /clear switches to (None: no sessions)
        self.new_store: Callable[[], SessionStore] | None = None
        for name in self.ext.commands():
            if name in BUILTIN_COMMANDS:
                warn(f"extension command /{name} is shadowed by the built-in /{name}")
        tty = sys.stdout.isatty()
        self.color = tty and not os.environ.get("NO_COLOR")
        self.renderer = Renderer(sys.stdout, sys.stdout, color=self.color, show_thinking=True)
        self.readline: Any = None

    def _setup_readline(self) -> None:
        if not sys.stdin.isatty():
            return
        try:
            import readline
        except ImportError:
            return
        self.readline = readline
        path = _history_file()
        try:
            readline.read_history_file(path)
        except OSError:
            pass
        readline.set_history_length(1000)

    def _save_history(self) -> None:
        if self.readline is None:
            return
        path = _history_file()
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.readline.write_history_file(path)
        except OSError:
            pass

    def _dim(self, s: str) -> str:
        return f"{_DIM}{s}{_RESET}" if self.color else s

    def _error(self, e: BaseException) -> None:
        msg = f"error: {e}"
        print(f"{_RED}{msg}{_RESET}" if self.color else msg)

    def loop(self) -> int:
        from .. import __version__

        self._setup_readline()
        print(
            self._dim(
                f"panto {__version__} · {self.agent.config.model_spec} · /help for commands, "
                "Ctrl-D to exit"
            )
        )
        prompt = f"{_BOLD}›{_RESET} " if self.color else "> "
        interrupted = False
        try:
            while True:
                try:
                    line = input(prompt)
                except EOFError:
                    print()
                    return 0
                except KeyboardInterrupt:
                    buffer = self.readline.get_line_buffer() if self.readline else ""
                    print()
                    if buffer.strip():
                        interrupted = False
                        continue
                    if interrupted:
                        return 0
                    interrupted = True
                    print(self._dim("(Ctrl-C again or Ctrl-D to exit)"))
                    continue
                interrupted = False
                text = line.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    if self.command(text):
                        return 0
                    continue
                self.turn(line)
        finally:
            self._save_history()

    def command(self, text: str) -> bool:
        """Run a slash command; True means exit."""
        name, _, arg = text.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            return True
        if name == "/help":
            print(help_text(self.ext.commands()))
        elif name == "/model":
            if not arg:
                print(self.agent.config.model_spec)
            else:
                try:
                    self.agent.config = self.agent.config.with_model(arg)
                except ConfigError as e:
                    print(f"error: {e}")
                else:
                    if self.agent.store is not None:
                        cfg = self.agent.config
                        self.agent.store.append_model_change(cfg.provider, cfg.model)
                    print(self._dim(f"model: {self.agent.config.model_spec}"))
        elif name == "/clear":
            fresh = self.new_store() if self.new_store is not None else None
            old = self.agent.store
            self.agent.clear(store=fresh)
            if fresh is not None and old is not None:
                old.close()
            print(self._dim("conversation cleared" + (" (new session)" if fresh else "")))
        elif name == "/compact":
            self.compact(arg or None)
        elif name == "/sessions":
            self.list_sessions()
        elif name == "/tools":
            self.list_tools()
        elif name == "/extensions":
            self.list_extensions()
        elif name[1:] in self.ext.commands():
            self.lua_command(name[1:], arg)
        else:
            print(f"unknown command {name} (try /help)")
        return False

    def list_tools(self) -> None:
        tools = self.agent.tool_owners()
        if not tools:
            print(self._dim("no tools"))
        lua_tools = self.ext.source.runtime.tools if self.ext.source is not None else {}
        for decl, owner in tools:
            lt = lua_tools.get(decl.name) if owner == "panto-lua" else None
            if lt is not None and lt.entry:
                owner = f"{owner}:{lt.entry}"
            print(f"{decl.name:<16} {owner:<22} {_one_line(decl.description, 48)}")

    def list_extensions(self) -> None:
        ext = self.ext
        if ext.report is None:
            print(self._dim(f"no Lua extensions ({ext.error or 'not loaded'})"))
            return
        report = ext.report
        if not report.entries:
            print(self._dim("no extension entries"))
        for name, info in report.entries.items():
            if info.active:
                state = "active"
            elif info.error:
                state = "error"
            elif name in report.denied:
                state = "denied"
            else:
                state = "inactive"
            print(f"{name:<24} {state:<8} {info.source.layer:<8} {info.source.path}")
            for p in info.shadowed:
                print(self._dim(f"{'':<24} shadows {p}"))
            if info.error:
                print(self._dim(f"{'':<24} {_one_line(info.error, 70)}"))
        for err in report.errors:
            if not any(err.endswith(i.error or "\0") for i in report.entries.values()):
                print(self._dim(f"error: {_one_line(err, 90)}"))

    def lua_command(self, name: str, arg: str) -> None:
        try:
            out = self.ext.run_command(name, arg)
        except KeyboardInterrupt:
            print(self._dim("[cancelled]"))
            return
        except Exception as e:  # noqa: BLE001 - an extension's failure, not ours
            msg = f"/{name} failed: {e}"
            print(f"{_RED}{msg}{_RESET}" if self.color else msg)
            return
        if out:
            print(out.rstrip("\n"))

    def list_sessions(self) -> None:
        from ..sessions import FSJSONLStore, list_sessions
        from .sessions import format_sessions

        infos = list_sessions(dir=self.agent.config.session_dir, cwd=os.getcwd())[:20]
        for line in format_sessions(infos) if infos else ["no saved sessions in this directory"]:
            print(line)
        store = self.agent.store
        if isinstance(store, FSJSONLStore):
            sid = store.session_id[:8]
            if store.path.exists():
                print(self._dim(f"this session: {sid} (resume it later: panto --resume {sid})"))
            else:
                print(self._dim(f"this session: {sid} (saved from its first prompt on)"))
        else:
            print(self._dim("this session is not saved (--no-session)"))

    def compact(self, extra: str | None) -> None:
        print(self._dim("compacting the conversation…"))
        try:
            res = self.agent.compact(extra=extra)
        except KeyboardInterrupt:
            print(self._dim("[cancelled] the conversation is unchanged"))
            return
        except PantoError as e:
            self._error(e)
            return
        if res is None:
            print(self._dim("nothing to compact"))
            return
        print(
            self._dim(
                f"compacted {res.messages_before} messages (~{res.tokens_before:,} tokens) "
                f"into a summary of {len(res.summary):,} characters"
            )
        )

    def turn(self, text: str) -> None:
        agent = self.agent
        agent.submit_user_message(text)
        started = time.perf_counter()
        r = self.renderer
        stream = agent.run()
        try:
            with stream:
                for ev in stream:
                    r.event(ev)
        except KeyboardInterrupt:
            stream.close()
            r.newline()
            print(self._dim("[cancelled]"))
            return
        except PantoError as e:
            r.newline()
            self._error(e)
            return
        r.newline()
        print(self._dim(usage_line(stream.usage, time.perf_counter() - started)))

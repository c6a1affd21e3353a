"""The interactive mode: ``panto`` with no ``-p``.

A readline prompt with history.  Keys and input:

- Enter sends; Alt-Enter (or a line ending in ``\\``) inserts a newline; a
  paste (bracketed paste) is one prompt however many lines it has;
- a line starting with ``/`` is a command, ``//`` sends a literal ``/``
  (a line starting with the path of an existing file, a dragged screenshot,
  is a prompt: a command's name wins, then the file);
- ``@path`` attaches a file (an image, or a text file's contents) and each
  attachment is shown (``[image: shot.png, 120 KB]``); Tab completes
  commands, ``/model`` names and ``@paths`` (``panto.cli.complete``);
- Ctrl-C cancels the running turn (tools included), clears a non-empty
  input line, and twice at an empty prompt exits (as does Ctrl-D).

While a turn runs a status line says what it waits for (the model or a
tool, with a spinner and the elapsed time); tool results are one line each,
``/expand [N]`` prints one in full; thinking is dimmed, then one line
(``/expand thinking [N]``); the answer's Markdown is formatted; a usage line
follows each turn.  ``/context`` shows the system prompt's parts
(``panto.system_prompt``) and the context's size.  A turn that fails
before any answer leaves its prompt out of the conversation: it is put back
in the input line to edit or resend (nothing is resent by itself).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, PantoError, SessionError
from ..images import FILE_BLOCK_START, image_marker, prompt_attachments, typed_text
from .common import valid_text, warn
from .render import (
    BOLD,
    DIM,
    RED,
    RESET,
    Renderer,
    one_line,
    result_summary,
    stall_hint_after,
    tool_summary,
    usage_line,
    wait_hint_after,
)
from .signals import Terminated

if TYPE_CHECKING:
    from ..agent import Agent, Session
    from ..app import Extensions
    from ..skills import Skills
    from ..system_prompt import SystemPrompt

__all__ = ["Interactive", "BUILTIN_COMMANDS", "help_text", "HELP", "prompt_of", "prompt_string"]

#: Built-in slash commands: name -> (arguments, description).  Lua commands
#: with one of these names are shadowed (a warning says so at start-up).
BUILTIN_COMMANDS: dict[str, tuple[str, str]] = {
    "help": ("", "this help"),
    "model": ("[P/MODEL]", "show or switch the model (e.g. /model anthropic/claude-sonnet-4-5)"),
    "clear": ("", "start a new conversation"),
    "compact": ("[INSTRUCTIONS]", "replace the conversation with a summary (frees context)"),
    "expand": (
        "[N] | thinking [N]",
        "print tool result N, or thinking N, in full (default: the last one)",
    ),
    "thinking": ("[on|off]", "show or hide the model's thinking (shown dimmed by default)"),
    "mode": (
        "[MODE]",
        "show or set the permission mode: default, accept-edits, plan, dont-ask, bypass "
        "(no MODE, or Shift-Tab: the next of default → accept-edits → plan)",
    ),
    "context": ("", "the system prompt, part by part with its origin, and the context's size"),
    "sessions": ("", "list this directory's saved sessions (resume one with panto --resume ID)"),
    "tree": (
        "[ENTRY]",
        "pick a turn of the session's tree (arrows; Enter continues after it, e edits "
        "its prompt); /tree ENTRY continues there",
    ),
    "fork": ("", "copy the conversation into a new session and continue there"),
    "label": ("[NAME]", "name the current entry (no NAME: remove its label)"),
    "tools": ("", "list the tools the model can call, with their owners"),
    "extensions": ("", "list the Lua extension entries: source, and whether active"),
    "skills": ("", "list the Agent Skills found; /skill:NAME [ARGS] runs one"),
    "mcp": ("", "the MCP servers: state, tool count, last error"),
    "exit": ("", "quit (also /quit, Ctrl-D)"),
}

HELP_FOOTER = (
    "Alt-Enter or a trailing \\ adds a line; // at the start sends a literal /.\n"
    "Tab completes /commands, /model names and @paths; @file attaches a file.\n"
    "Ctrl-C cancels a running turn; Ctrl-C twice at an empty prompt exits."
)

#: how many earlier exchanges --continue / --resume show
RECAP_EXCHANGES = 3


def help_text(lua_commands: dict[str, str] | None = None) -> str:
    usage = {n: n + (" " + a if a else "") for n, (a, _) in BUILTIN_COMMANDS.items()}
    w = max(map(len, usage.values())) + 1
    lines = [f"/{usage[n]:<{w}} {d}" for n, (_, d) in BUILTIN_COMMANDS.items()]
    extra = {n: d for n, d in (lua_commands or {}).items() if n not in BUILTIN_COMMANDS}
    if extra:
        lines.append("extension commands:")
        lines += [f"/{n:<{w}} {one_line(d, 56)}" for n, d in sorted(extra.items())]
    lines.append(HELP_FOOTER)
    return "\n".join(lines)


HELP = help_text()


def prompt_string(color: bool, text: str = "›") -> str:
    """The input prompt.  Colour codes sit between readline's ``\\001`` and
    ``\\002`` markers, so readline knows they take no columns (without them
    recalling history or moving the cursor garbles the line)."""
    if not color:
        return "> " if text == "›" else text + " "
    return f"\001{BOLD}\002{text}\001{RESET}\002 "


def prompt_of(loaded: Any) -> str | None:
    """The unanswered prompt of a loaded session as it was typed (the
    files attached to it left out: sending it again attaches them again)."""
    msg = loaded.dangling_message
    return typed_text(msg) if msg is not None else loaded.dangling_user


def _history_file() -> str:
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return os.path.join(state, "panto", "history")


class Interactive:
    def __init__(
        self,
        agent: Agent,
        ext: Extensions | None = None,
        *,
        prefill: str | None = None,
        system_prompt: SystemPrompt | None = None,
        skills: Skills | None = None,
        mcp: Any = None,
        session: Session | None = None,
    ) -> None:
        from ..agent import Session
        from ..app import Extensions
        from ..skills import Skills

        self.agent = agent
        #: the one writer: the store switches (/clear, /fork, a failed
        #: turn's reload) and the session list go through it
        self.session = session if session is not None else Session(agent)
        #: the assembled system prompt with its parts' origins, for /context
        self.system_prompt = system_prompt
        #: the Agent Skills for /skills and /skill:NAME
        self.skills = skills if skills is not None else Skills()
        #: the MCP tool source (panto.mcp), for /mcp
        self.mcp = mcp
        self.ext = ext if ext is not None else Extensions()
        for name in self.ext.commands():
            if name in BUILTIN_COMMANDS:
                warn(f"extension command /{name} is shadowed by the built-in /{name}")
        tty = sys.stdout.isatty()
        self.color = tty and not os.environ.get("NO_COLOR")
        cfg = agent.config
        self.renderer = Renderer(
            sys.stdout,
            sys.stdout,
            color=self.color,
            show_thinking=True,
            markdown=self.color,
            status=tty,
            collapse_thinking=tty,
            timeouts=(cfg.first_byte_timeout, cfg.idle_timeout),
            hint_after=wait_hint_after(),
            stall_after=stall_hint_after(),
        )
        self.readline: Any = None
        self._matches: list[str] = []  # the completer's candidates (readline asks one by one)
        #: the approval prompt of the permission gate (a terminal only)
        self.approver: Any = None
        gate = agent.permissions
        if gate is not None and sys.stdin.isatty() and tty:
            from .approve import Approver

            self.approver = Approver(self.renderer, self.color)
            gate.approver = self.approver
            if self.ext.source is not None:
                # a call the OS sandbox blocked: offer to run it again outside
                # (default mode only; the gate asks and records the answer)
                self.ext.source.escalate = gate.approve_unsandboxed
        self._show_mode()
        #: text put in the next input line (a failed turn's prompt)
        self.prefill = prefill
        #: USD spent in this process, where the model's price is known
        self.total_cost = 0.0

    # -- input

    def _setup_readline(self) -> None:
        if not sys.stdin.isatty():
            return
        try:
            import readline
        except ImportError:
            return
        self.readline = readline
        # Python turns bracketed paste off; on, a paste is one line however
        # many newlines it holds.  Alt-Enter inserts a newline.
        readline.parse_and_bind("set enable-bracketed-paste on")
        readline.parse_and_bind(r'"\e\r": "\C-v\C-j"')
        readline.parse_and_bind(r'"\e\n": "\C-v\C-j"')
        # Shift-Tab: the next permission mode (the line typed so far goes to
        # the kill ring: Ctrl-Y brings it back)
        readline.parse_and_bind(r'"\e[Z": "\C-a\C-k/mode\C-m"')
        path = _history_file()
        try:
            readline.read_history_file(path)
        except OSError:
            pass
        readline.set_history_length(1000)
        # Tab completes (Python binds it to "insert a tab" by default); words
        # are split at whitespace only, so "/ex", "@src/ca", "mock/ant" are one
        readline.set_completer_delims(" \t\n")
        readline.set_completer(self._complete)
        readline.parse_and_bind("tab: complete")

    def _complete(self, word: str, state: int) -> str | None:
        """readline's completer: candidate ``state`` for ``word``."""
        if state == 0:
            from .complete import completions, model_names

            rl = self.readline
            try:
                self._matches = completions(
                    rl.get_line_buffer(),
                    rl.get_begidx(),
                    word,
                    commands=[*BUILTIN_COMMANDS, "quit", *self.ext.commands()],
                    models=model_names(self.agent.config),
                )
            except Exception:  # noqa: BLE001 - a completer's error must not break the line
                self._matches = []
        return self._matches[state] if state < len(self._matches) else None

    def _save_history(self) -> None:
        if self.readline is None:
            return
        path = _history_file()
        try:
            from ..paths import open_private, private_dirs

            private_dirs(os.path.dirname(path))
            fd = open_private(path, os.O_WRONLY)  # 0600 before readline writes it
            try:
                os.fchmod(fd, 0o600)  # also one an older panto left 0644
            finally:
                os.close(fd)
            self.readline.write_history_file(path)
        except OSError:
            pass

    def _input(self, prompt: str) -> str:
        text, self.prefill = self.prefill, None
        rl = self.readline
        if text and rl is not None:
            rl.set_startup_hook(lambda: rl.insert_text(text))
            try:
                return input(prompt)
            finally:
                rl.set_startup_hook(None)
        return input(prompt)

    def read_prompt(self) -> str:
        """One prompt: a line, continued while it ends with a single ``\\``.
        The prompt names the permission mode when it is not ``default``."""
        gate = self.agent.permissions
        mode = gate.mode if gate is not None else "default"
        line = self._input(prompt_string(self.color, "›" if mode == "default" else f"{mode} ›"))
        while line.endswith("\\") and not line.endswith("\\\\"):
            line = line[:-1] + "\n" + input(prompt_string(self.color, "…"))
        return valid_text(line)

    # -- output helpers

    def _dim(self, s: str) -> str:
        return f"{DIM}{s}{RESET}" if self.color else s

    def _error(self, e: BaseException | str) -> None:
        msg = f"error: {e}"
        print(f"{RED}{msg}{RESET}" if self.color else msg)

    def recap(self, exchanges: int = RECAP_EXCHANGES) -> None:
        """Show the last few exchanges of a resumed conversation as they were
        shown live: prompts, the answers' text (cut to a few lines), each
        tool call and its one-line result, numbered for ``/expand``."""
        from ..conversation import Image, Text, ToolResultBlock, ToolUse
        from ..events import ToolCallStart, ToolResult

        msgs = [m for m in self.agent.conversation if m.role != "system"]
        starts = [i for i, m in enumerate(msgs) if m.role == "user" and m.text.strip()]
        if not starts:
            return
        first = starts[-exchanges] if len(starts) >= exchanges else starts[0]
        if first > 0:
            print(self._dim(f"… {first} earlier messages"))
        calls: dict[str, ToolUse] = {}
        for m in msgs[first:]:
            prompt = typed_text(m).strip() if m.role == "user" else ""
            for block in m.content:
                if prompt and isinstance(block, Text):  # where the prompt's text starts
                    lines, prompt = prompt.split("\n"), ""
                    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
                    print(self._dim("› ") + one_line(lines[0], 100) + self._dim(more))
                elif isinstance(block, Image):
                    print(self._dim("  " + image_marker(block)))
                elif isinstance(block, Text) and block.text.startswith(FILE_BLOCK_START):
                    name = block.text[len(FILE_BLOCK_START) :].partition('"')[0]
                    print(self._dim(f"  [file: {name}]"))
                elif isinstance(block, ToolUse):
                    calls[block.id] = block
                    print(self._dim(tool_summary(ToolCallStart(block))))
                elif isinstance(block, ToolResultBlock):
                    call = calls.get(block.tool_use_id) or ToolUse(block.tool_use_id, "?", {})
                    ev = ToolResult(call, block.content, block.is_error, block.images)
                    self.renderer.results.append(ev)  # /expand N shows it in full
                    summary = result_summary(ev, len(self.renderer.results))
                    print(
                        f"{RED}{summary}{RESET}"
                        if ev.is_error and self.color
                        else self._dim(summary)
                    )
                elif m.role == "assistant" and isinstance(block, Text):
                    lines = block.text.strip().split("\n") if block.text.strip() else []
                    for line in lines[:6]:
                        print(line)
                    if len(lines) > 6:
                        print(self._dim(f"  … {len(lines) - 6} more lines"))
        print(self._dim("─" * 8))

    # -- the loop

    def loop(self, first: str | None = None) -> int:
        """Read and run prompts and commands until /exit, Ctrl-D or Ctrl-C
        twice; ``first`` (``panto "do X"``) is run first, as if typed."""
        from .. import __version__

        self._setup_readline()
        gate = self.agent.permissions
        mode = f" · {gate.mode} mode" if gate is not None else ""
        print(
            self._dim(
                f"panto {__version__} · {self.agent.config.model_spec}{mode} · /help for commands, "
                "Ctrl-D to exit"
            )
        )
        if any(m.role != "system" for m in self.agent.conversation):
            self.recap()
        if self.prefill:
            print(self._dim("your last prompt got no answer; it is in the input line"))
        interrupted = False
        try:
            if first is not None:
                if self.readline is not None:
                    self.readline.add_history(first)  # Up recalls it, as if typed
                print(prompt_string(self.color).replace("\001", "").replace("\002", "") + first)
                if self.handle(first):
                    return 0
            while True:
                try:
                    line = self.read_prompt()
                except EOFError:
                    print()
                    return 0
                except Terminated:
                    raise
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
                if self.handle(line):
                    return 0
        finally:
            self.renderer.stop_status()
            self._save_history()

    def handle(self, line: str) -> bool:
        """Run one input line: a prompt or a command; True means exit."""
        text = line.strip()
        if not text:
            return False
        if text.startswith("//"):
            self.turn(line.lstrip()[1:])
        elif text.startswith("/") and not self._names_path(text):
            return self.command(text)
        else:
            self.turn(line)
        return False

    def _names_path(self, text: str) -> bool:
        """Whether a line starting with ``/`` starts with the path of an
        existing file (a dragged screenshot, a pasted path) rather than a
        command: a command's name wins, then an existing file (a directory
        such as ``/etc`` stays an unknown command)."""
        name = text.split(None, 1)[0]
        if name[1:] in BUILTIN_COMMANDS or name[1:] in self.ext.commands() or name == "/quit":
            return False
        first = re.match(r"(?:\\ |\S)+", text)
        path = first.group(0).replace("\\ ", " ") if first else name
        try:
            return os.path.isfile(path)
        except (OSError, ValueError):
            return False

    def command(self, text: str) -> bool:
        """Run a slash command; True means exit."""
        name, _, arg = text.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            return True
        if name == "/help":
            print(help_text(self.ext.commands()))
        elif name == "/model":
            self.switch_model(arg)
        elif name == "/clear":
            fresh = self.session.new()
            print(self._dim("conversation cleared" + (" (new session)" if fresh else "")))
        elif name == "/compact":
            self.compact(arg or None)
        elif name == "/expand":
            self.expand(arg)
        elif name == "/thinking":
            self.thinking(arg)
        elif name == "/mode":
            self.mode(arg)
        elif name == "/context":
            self.context()
        elif name == "/sessions":
            self.list_sessions()
        elif name in ("/tree", "/fork", "/label"):
            self.tree_command(name[1:], arg)
        elif name == "/tools":
            self.list_tools()
        elif name == "/extensions":
            self.list_extensions()
        elif name == "/skills":
            self.list_skills()
        elif name == "/mcp":
            self.list_mcp()
        elif name.startswith("/skill:"):
            self.run_skill(text)
        elif name[1:] in self.ext.commands():
            self.lua_command(name[1:], arg)
        else:
            print(f"unknown command {name} (try /help; // sends a line starting with /)")
        return False

    def list_mcp(self) -> None:
        if self.mcp is None:
            from ..app import untrusted_mcp_note

            print(self._dim("no MCP servers configured (panto mcp add NAME -- COMMAND ARGS...)"))
            why = untrusted_mcp_note(self.agent.config)
            if why:
                print(self._dim(why))
            return
        for st in self.mcp.status():
            print(f"{st.name}  {st.state} · {st.tools} tools · {st.target}")
            if st.error:
                print(self._dim(f"  last error: {st.error}"))

    def list_skills(self) -> None:
        if not self.skills.skills:
            print(self._dim("no skills found (folders with a SKILL.md; see docs/skills.md)"))
            return
        for s in self.skills.skills:
            hidden = self._dim(" (hidden from the model)") if s.hidden else ""
            print(f"/skill:{s.name}{hidden}  {one_line(s.description, 70)}")
            print(self._dim(f"  {s.location}"))

    def run_skill(self, text: str) -> None:
        """``/skill:NAME args``: the skill's body and the arguments as a prompt."""
        from ..skills import expand_command

        try:
            prompt = expand_command(self.skills, text)
        except LookupError as e:
            self._error(e)
            return
        if prompt is not None:
            self.turn(prompt)

    def switch_model(self, arg: str) -> None:
        agent = self.agent
        if not arg:
            print(agent.config.model_spec)
            return
        try:
            new = agent.config.with_model(arg)
            new.resolve_api_key()  # a provider without a key fails now, not at the next prompt
        except ConfigError as e:
            self._error(f"{e}; the model is still {agent.config.model_spec}")
            return
        try:
            agent.set_model(new.model_spec)  # records the model_change in the session
        except PantoError as e:
            self._error(e)
            return
        print(self._dim(f"model: {agent.config.model_spec}"))

    def mode(self, arg: str) -> None:
        """/mode [MODE]: set the permission mode; without MODE the next of
        default → accept-edits → plan (what Shift-Tab sends)."""
        from ..policy.permissions import MODE_CYCLE, MODES

        gate = self.agent.permissions
        if gate is None:
            print(self._dim("no permission gate: every tool call runs"))
            return
        if not arg:
            cur = gate.mode
            arg = (
                MODE_CYCLE[(MODE_CYCLE.index(cur) + 1) % len(MODE_CYCLE)]
                if cur in MODE_CYCLE
                else "default"
            )
        if arg not in MODES:
            self._error(f"unknown mode {arg!r} (expected one of: {', '.join(MODES)})")
            return
        gate.mode = arg
        self._show_mode()
        print(self._dim(f"permission mode: {arg}"))

    def _show_mode(self) -> None:
        """The status line names the mode when it is not the default."""
        gate = self.agent.permissions
        status = self.renderer.status
        if status is not None:
            mode = gate.mode if gate is not None else "default"
            status.note = "" if mode == "default" else f"{mode} mode"

    def thinking(self, arg: str) -> None:
        r = self.renderer
        if arg in ("on", "off"):
            r.show_thinking = arg == "on"
        elif arg:
            print("usage: /thinking [on|off]")
            return
        print(self._dim(f"thinking: {'shown' if r.show_thinking else 'hidden'}"))

    def expand(self, arg: str) -> None:
        what, _, rest = arg.partition(" ")
        if what == "thinking":
            self.expand_thinking(rest.strip())
            return
        try:
            index = int(arg) if arg else None
        except ValueError:
            print(
                "usage: /expand [N] | /expand thinking [N]  "
                "(N: the number a tool result or thinking line shows)"
            )
            return
        text = self.renderer.expand(index)
        if text is None:
            n = len(self.renderer.results)
            print(
                self._dim(f"no tool result {arg}" if n else "no tool results yet")
                + (self._dim(f" (1..{n})") if n else "")
            )
            return
        print(text)

    def context(self) -> None:
        """/context: the system prompt as ``panto config system-prompt``
        prints it, then the context's size against the model's window and
        the auto-compaction threshold."""
        from ..agent.compaction import context_tokens
        from ..models import model_info

        agent, cfg = self.agent, self.agent.config
        if self.system_prompt is not None:
            print(self.system_prompt.describe().rstrip("\n"))
        else:  # built elsewhere: only the text the conversation holds
            for m in agent.conversation:
                if m.role == "system" and m.text.strip():
                    print(self._dim("--- system: this session ---"))
                    print(m.text.strip())
        used = context_tokens(m for m in agent.conversation if m.role != "system")
        try:
            window = model_info(cfg).context_window
        except PantoError:
            window = None
        line = f"context: {used:,}"
        if window:
            line += f" of {window:,} tokens ({used / window:.0%})"
            if cfg.compaction_auto:
                limit = min(
                    cfg.compaction_threshold * window, window - cfg.compaction_reserve_tokens
                )
                line += f" · auto-compaction at {int(limit):,}"
            else:
                line += " · auto-compaction off"
        else:
            line += " tokens · the context window is unknown (set it: [models] context_window)"
        system = "\n\n".join(m.text for m in agent.conversation if m.role == "system")
        print(self._dim("─" * 8))
        print(f"{line} · {cfg.model_spec}")
        print(self._dim(f"system prompt: ~{len(system) // 4:,} tokens (characters / 4)"))

    def expand_thinking(self, arg: str) -> None:
        try:
            index = int(arg) if arg else None
        except ValueError:
            print("usage: /expand thinking [N]")
            return
        text = self.renderer.expand_thinking(index)
        if text is None:
            n = len(self.renderer.thoughts)
            print(self._dim(f"no thinking {arg} (1..{n})" if n else "no thinking yet"))
            return
        print(text)

    def list_tools(self) -> None:
        tools = self.agent.tool_owners()
        if not tools:
            print(self._dim("no tools"))
        lua_tools = self.ext.source.runtime.tools if self.ext.source is not None else {}
        for decl, owner in tools:
            lt = lua_tools.get(decl.name) if owner == "panto-lua" else None
            if lt is not None and lt.entry:
                owner = f"{owner}:{lt.entry}"
            print(f"{decl.name:<16} {owner:<22} {one_line(decl.description, 48)}")

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
                print(self._dim(f"{'':<24} {one_line(info.error, 70)}"))
        for err in report.errors:
            if not any(err.endswith(i.error or "\0") for i in report.entries.values()):
                print(self._dim(f"error: {one_line(err, 90)}"))

    def lua_command(self, name: str, arg: str) -> None:
        try:
            out = self.ext.run_command(name, arg)
        except Terminated:
            raise
        except KeyboardInterrupt:
            print(self._dim("[cancelled]"))
            return
        except Exception as e:  # noqa: BLE001 - an extension's failure, not ours
            self._error(f"/{name} failed: {e}")
            return
        if out:
            print(out.rstrip("\n"))

    def list_sessions(self) -> None:
        from ..sessions import FSJSONLStore
        from .sessions import format_sessions

        try:  # the configured store: [session] dir/store/url
            infos = self.session.list()[:20]
        except PantoError as e:
            self._error(e)
            infos = []
        for line in format_sessions(infos) if infos else ["no saved sessions in this directory"]:
            print(line)
        store = self.agent.store
        if hasattr(store, "tree") and not isinstance(store, FSJSONLStore):
            sid = store.session_id[:8]  # type: ignore[union-attr]
            print(self._dim(f"this session: {sid} (resume it later: panto --resume {sid})"))
        elif isinstance(store, FSJSONLStore):
            sid = store.session_id[:8]
            if store.path.exists():
                print(self._dim(f"this session: {sid} (resume it later: panto --resume {sid})"))
            else:
                print(self._dim(f"this session: {sid} (saved from its first prompt on)"))
        else:
            print(self._dim("this session is not saved (--no-session)"))

    def tree_command(self, name: str, arg: str) -> None:
        """/tree [ENTRY], /fork, /label [NAME] (the session's tree)."""
        from .sessions import format_tree

        store = self.agent.store
        if not hasattr(store, "tree"):
            print(self._dim("this session is not saved (--no-session): it has no tree"))
            return
        try:
            if name == "label":
                store.label(None, arg or None)  # type: ignore[union-attr]
                print(self._dim(f"labelled {store.leaf_id}: {arg}" if arg else "label removed"))  # type: ignore[union-attr]
            elif name == "fork":
                new = self.session.fork()
                print(self._dim(f"forked: now in session {new[:8]} (the old one is unchanged)"))
            elif not arg and self.readline is not None and sys.stdout.isatty():
                self.tree_picker(store.tree())  # type: ignore[union-attr]
            elif not arg:
                nodes = store.tree()  # type: ignore[union-attr]
                for line in format_tree(nodes) or ["(empty)"]:
                    print(line)
                print(self._dim("continue from an entry: /tree ENTRY (a prompt: edit and resend)"))
            else:
                ids = [n.id for n in store.tree() if n.id.startswith(arg)]  # type: ignore[union-attr]
                if len(ids) != 1:
                    self._error(f"{arg!r} matches {len(ids)} entries (see /tree)")
                    return
                self._branch(ids[0])
        except PantoError as e:
            self._error(e)

    def _branch(self, entry_id: str) -> None:
        loaded = self.agent.branch_from(entry_id)
        if loaded.dangling_user is not None:
            self.prefill = prompt_of(loaded)
            print(self._dim("branched: the prompt is in the input line to edit and send"))
        else:
            print(self._dim(f"continuing from {entry_id}"))

    def tree_picker(self, nodes: Any) -> None:
        """/tree on a terminal: pick a turn with the arrow keys; Enter
        continues after its answer, ``e`` puts its prompt in the input line
        (to edit and send as a new branch)."""
        import shutil

        from .picker import pick
        from .sessions import tree_rows

        rows = tree_rows(nodes, width=shutil.get_terminal_size().columns - 1)
        if not rows:
            print(self._dim("(no prompts yet)"))
            return
        current = [i for i, (turn, _) in enumerate(rows) if any(n.current for n in turn)]
        choice = pick(
            [line for _, line in rows],
            start=current[0] if current else len(rows) - 1,
            keys=("e",),
            footer="↑/↓ choose a turn · Enter: continue after it · e: edit its prompt · Esc: cancel",
        )
        if choice is None:
            print(self._dim("tree: nothing chosen; the conversation is unchanged"))
            return
        turn = rows[choice[0]][0]
        self._branch(turn[0].id if choice[1] == "e" else turn[-1].id)

    def compact(self, extra: str | None) -> None:
        print(self._dim("compacting the conversation…"))
        try:
            res = self.agent.compact(extra=extra)
        except Terminated:
            raise
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

    # -- a turn

    def _submit(self, text: str) -> bool:
        """Add the prompt to the conversation (and the session file); False
        when it could not be saved (then nothing changed)."""
        conv = self.agent.conversation
        before = list(conv)
        att = prompt_attachments(text)  # @path/to/image.png, @file, a dragged path
        for p in att.problems:
            warn(p)
        try:
            self.agent.submit_user_message(text, att.images, files=att.files)
        except SessionError as e:
            if len(conv) != len(before):  # the message went into memory, not the file
                conv.clear()
                conv.extend(before)
            self._error(
                f"{e}. Your prompt was not sent; the session file is unchanged and nothing "
                "was lost (it is back in the input line)."
            )
            self.prefill = text
            return False
        for line in att.shown:
            print(self._dim(line))
        return True

    def _retract(self, text: str) -> None:
        """The turn failed before any answer was committed: take its prompt
        out of the conversation (so the next prompt is not merged with it)
        and put it back in the input line.  A session file keeps it as an
        unanswered prompt; the next prompt is saved as its sibling."""
        agent = self.agent
        msgs = list(agent.conversation)
        if not msgs or msgs[-1].role != "user":
            return  # something of the answer (or a tool round) was committed
        if self.session.backend is not None:  # a saved session: reload it without the prompt
            try:
                self.session.reopen()
            except PantoError as e:
                warn(f"could not reload the session ({e}); the prompt stays in the conversation")
                return
        else:
            agent.conversation.clear()
            agent.conversation.extend(msgs[:-1])
        self.prefill = text
        if self.readline is not None:
            print(self._dim("your prompt is back in the input line: Enter resends it"))
        else:
            print(self._dim("your prompt was left out of the conversation (not resent)"))

    def turn(self, text: str) -> None:
        agent = self.agent
        if not self._submit(text):
            return
        started = time.perf_counter()
        r = self.renderer
        if self.approver is not None:
            self.approver.cancelled.clear()
        stream = agent.run()
        r.waiting("model")
        try:
            with stream:
                for ev in stream:
                    r.event(ev)
        except KeyboardInterrupt as e:
            if self.approver is not None:
                self.approver.cancelled.set()  # a waiting approval prompt answers "deny"
            stream.close()
            r.stop_status()
            if isinstance(e, Terminated):  # the terminal may be gone (SIGHUP)
                with contextlib.suppress(OSError, ValueError):
                    r.newline()
                raise
            r.newline()
            print(self._dim("[cancelled]"))
            self._retract(text)
            return
        except PantoError as e:
            r.stop_status()
            r.newline()
            self._error(e)
            self._retract(text)
            return
        finally:
            r.stop_status()
        r.newline()
        seconds = time.perf_counter() - started
        cost = self._cost(stream.usage)
        line = usage_line(stream.usage, seconds, cost)
        if cost is not None and self.total_cost > cost:
            line += f" · session ${self.total_cost:.4f}"
        print(self._dim(line))

    def _cost(self, usage: Any) -> float | None:
        """USD of ``usage`` at the model's price (None when unknown); adds
        it to ``total_cost``."""
        from ..models import model_info

        try:
            cost = model_info(self.agent.config).cost(usage)
        except PantoError:
            return None
        if cost is not None:
            self.total_cost += cost
        return cost

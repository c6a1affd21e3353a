"""The system prompt, built from parts (the seeds' "system prompt construction
framework").

In order:

1. **the base**: panto's built-in coding-agent prompt (the tools available,
   generated from their declarations; how to use them; the working
   directory, OS, shell, date and whether it is a git repository).  Replaced
   by, highest first: an explicit ``system_prompt`` (``--system-prompt``,
   ``PANTO_SYSTEM_PROMPT``, ``open_agent(system_prompt=...)``, or a
   ``Config`` built in code); the project's ``.panto/SYSTEM.md``; the
   ``system_prompt`` key of a config file; the user's
   ``$XDG_CONFIG_HOME/panto/SYSTEM.md``.
2. **project context**: ``AGENTS.md`` (``CLAUDE.md`` where a directory has
   no ``AGENTS.md``) from the user's config dir, then from every directory
   from the repository root down to the working directory, each under its
   path.
3. **skills**: the ``<available_skills>`` listing (panto.skills).
4. **extension parts**: what Lua extensions contribute
   (``panto.ext.system_prompt``), each under its entry name.
5. **appends**: the user's and the project's ``APPEND_SYSTEM.md``, the
   ``append_system_prompt`` key, ``--append-system-prompt``.

:func:`build` returns a :class:`SystemPrompt`: its ``text`` is what the
model gets, ``describe()`` what ``panto config system-prompt`` prints (each
part under where it came from).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .paths import home_dir, user_config_dir
from .patterns import LazyPattern

if TYPE_CHECKING:
    import datetime

    from .config import Config
    from .tools import ToolDecl

__all__ = [
    "CONTEXT_FILES",
    "Part",
    "SystemPrompt",
    "base_prompt",
    "build",
    "context_files",
    "find_repo_root",
    "same_prompt",
]

#: Project context file names, preferred first: a directory contributes the
#: first of these it holds.
CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md")

_DATE_LINE = LazyPattern(r"^Today's date: \d{4}-\d{2}-\d{2}$", re.M)

#: Layers whose ``system_prompt`` is a file's (lower than ``.panto/SYSTEM.md``).
_FILE_LAYERS = ("base", "user", "project")


@dataclass(frozen=True)
class Part:
    """One piece of the prompt: ``kind`` is ``base``, ``context``,
    ``extension`` or ``append``; ``origin`` says where it came from (a file
    path, ``built-in``, ``config (LAYER)``, ``ext:NAME``...)."""

    kind: str
    origin: str
    text: str


@dataclass(frozen=True)
class SystemPrompt:
    """The assembled system prompt, part by part."""

    parts: tuple[Part, ...] = field(default_factory=tuple)

    @property
    def text(self) -> str:
        return "\n\n".join(p.text.strip() for p in self.parts if p.text.strip())

    def describe(self) -> str:
        """The prompt with a ``--- kind: origin ---`` line above each part."""
        out = []
        for p in self.parts:
            if p.text.strip():
                out.append(f"--- {p.kind}: {p.origin} ---\n{p.text.strip()}\n")
        return "\n".join(out)


def find_repo_root(cwd: str | os.PathLike[str]) -> Path | None:
    """The nearest directory at or above ``cwd`` holding ``.git``."""
    d = Path(cwd).resolve()
    for cand in (d, *d.parents):
        if (cand / ".git").exists():
            return cand
    return None


#: a sentence ends at . ! or ? before a space and a capital letter or digit,
#: not after "e.g." or "i.e." (std.find's description says "e.g. '**/*.py'")
_SENTENCE_END = LazyPattern(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)\s+(?=[A-Z0-9])")


def _tool_line(decl: ToolDecl) -> str:
    """A tool's line in the base prompt: its name and the first sentence of
    its description."""
    desc = " ".join((decl.description or "").split())
    first = _SENTENCE_END.split(desc, maxsplit=1)[0] if desc else ""
    return f"- {decl.name}: {first}" if first else f"- {decl.name}"


_GUIDES: tuple[tuple[str, str], ...] = (
    ("read", "Read a file before you change it, and read only the parts you need."),
    ("edit", "Make changes with edit (an exact, unique match); keep each change small."),
    ("write", "Use write only for new files or complete rewrites."),
    ("grep", "Search code with grep before guessing where something is defined."),
    ("find", "Find files by name with find; list a directory with ls."),
    (
        "bash",
        "Use bash to run the project's tests, build, git and other commands; "
        "do not start interactive programs; prefer non-destructive commands.",
    ),
)


def base_prompt(
    tools: Sequence[ToolDecl],
    *,
    cwd: str | os.PathLike[str],
    today: datetime.date | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """panto's built-in base prompt for a coding agent."""
    env = os.environ if env is None else env
    # date.today().isoformat() without importing datetime at start-up
    date = today.isoformat() if today is not None else time.strftime("%Y-%m-%d")
    names = {d.name for d in tools}
    lines = [
        "You are panto, a coding agent working in the user's terminal. You help with "
        "software engineering tasks: reading and changing code, running commands, "
        "answering questions about the project.",
        "",
    ]
    if tools:
        lines.append("Tools available:")
        lines += [_tool_line(d) for d in tools]
        lines.append("")
        lines.append("How to work:")
        lines += [f"- {g}" for name, g in _GUIDES if name in names]
        lines += [
            "- Call independent tools together in one response; they run in parallel.",
            "- After changing code, run the relevant tests when you can.",
        ]
    else:
        lines.append("No tools are available: answer from the conversation alone.")
        lines.append("")
        lines.append("How to work:")
    lines += [
        "- Be concise. Show file paths when you mention code. Do not invent file "
        "contents or command output.",
        "- Follow the project's conventions and its context files below.",
        "",
        "Environment:",
        f"Working directory: {os.fspath(cwd)}",
        f"Git repository: {'yes' if find_repo_root(cwd) is not None else 'no'}",
        f"OS: {_os_name()}".rstrip(),
        f"Shell: {env.get('SHELL') or 'unknown'}",
        f"Today's date: {date}",
    ]
    return "\n".join(lines)


def _os_name() -> str:
    """``platform.system() platform.release()`` without importing platform
    (~3 ms of start-up): ``os.uname`` where there is one."""
    uname = getattr(os, "uname", None)
    if uname is not None:
        u = uname()
        return f"{u.sysname} {u.release}"
    import platform

    return f"{platform.system()} {platform.release()}"


def context_files(cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> list[Path]:
    """The project context files, in prompt order: the user's config dir,
    then every directory from the repository root down to ``cwd`` (``cwd``
    alone outside a repository).  Per directory ``AGENTS.md``, else
    ``CLAUDE.md``."""
    here = Path(cwd).resolve()
    root = find_repo_root(here)
    dirs: list[Path] = [user_config_dir(env)]
    if root is None:
        dirs.append(here)
    else:
        chain = [here, *here.parents]
        dirs += reversed(chain[: chain.index(root) + 1])
    out: list[Path] = []
    for d in dirs:
        for name in CONTEXT_FILES:
            f = d / name
            if f.is_file():
                if f not in out:
                    out.append(f)
                break
    return out


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _shown(path: Path, env: Mapping[str, str] | None) -> str:
    home = str(home_dir(env))
    s = str(path)
    return "~" + s[len(home) :] if home != "/" and s.startswith(home + os.sep) else s


def build(
    config: Config | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    tools: Iterable[ToolDecl] = (),
    extension_parts: Iterable[tuple[str, str]] = (),
    skills: tuple[str, str] | None = None,
    system_prompt: str | None = None,
    append_system_prompt: str | None = None,
    env: Mapping[str, str] | None = None,
    today: datetime.date | None = None,
) -> SystemPrompt:
    """Assemble the system prompt for ``cwd`` (see the module docstring).

    ``system_prompt``/``append_system_prompt`` are the explicit values (the
    command line's); ``config`` supplies the configured ones.  ``skills`` is
    the ``<available_skills>`` part (origin, text) from panto.skills."""
    from .config import find_project_dir

    cwd_p = Path(cwd if cwd is not None else os.getcwd())
    tools = list(tools)
    project = find_project_dir(cwd_p, env)
    user = user_config_dir(env)
    parts: list[Part] = [_base(config, system_prompt, project, user, tools, cwd_p, today, env)]
    for f in context_files(cwd_p, env):
        text = _read(f)
        if text and text.strip():
            parts.append(
                Part("context", _shown(f, env), f"Instructions from {f}:\n\n{text.strip()}")
            )
    if skills is not None and skills[1].strip():
        parts.append(Part("skills", skills[0], skills[1]))
    for origin, text in extension_parts:
        parts.append(Part("extension", origin, text))
    for d in (user, project):
        f = d / "APPEND_SYSTEM.md" if d is not None else None
        text = _read(f) if f is not None else None
        if f is not None and text:
            parts.append(Part("append", _shown(f, env), text))
    if config is not None and config.append_system_prompt:
        o = config.origin("append_system_prompt")
        parts.append(Part("append", f"config ({o})", config.append_system_prompt))
    if append_system_prompt:
        parts.append(Part("append", "--append-system-prompt", append_system_prompt))
    return SystemPrompt(tuple(parts))


def _base(
    config: Config | None,
    explicit: str | None,
    project: Path | None,
    user: Path,
    tools: Sequence[ToolDecl],
    cwd: Path,
    today: datetime.date | None,
    env: Mapping[str, str] | None,
) -> Part:
    if explicit is not None:
        return Part("base", "--system-prompt", explicit)
    configured = config.system_prompt if config is not None else None
    layer = config.origin("system_prompt").layer if config is not None else "default"
    if configured is not None and layer not in _FILE_LAYERS:
        return Part("base", f"config ({config.origin('system_prompt')})", configured)  # type: ignore[union-attr]
    if project is not None:
        text = _read(project / "SYSTEM.md")
        if text is not None:
            return Part("base", _shown(project / "SYSTEM.md", env), text)
    if configured is not None:
        return Part("base", f"config ({config.origin('system_prompt')})", configured)  # type: ignore[union-attr]
    text = _read(user / "SYSTEM.md")
    if text is not None:
        return Part("base", _shown(user / "SYSTEM.md", env), text)
    return Part("base", "built-in", base_prompt(tools, cwd=cwd, today=today, env=env))


def same_prompt(old: str, new: str) -> bool:
    """Is ``new`` the prompt ``old`` was, up to the date line (a resumed
    session keeps its prompt when only the day changed)?"""
    if old == new:
        return True
    m = _DATE_LINE.search(old)
    if m is None:
        return False
    return _DATE_LINE.sub(lambda _: m.group(0), new, count=1) == old

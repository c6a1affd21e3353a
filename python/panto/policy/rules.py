"""Permission rules in Claude Code's syntax, so users can paste theirs.

A rule is ``Tool`` or ``Tool(specifier)``:

- ``Bash`` / ``Bash(*)``: every command; ``Bash(git status)``: exactly that
  command; ``Bash(rm *)``: ``*`` is any text (a space before a trailing
  ``*`` is a word boundary: ``Bash(ls *)`` matches ``ls`` and ``ls -la``,
  not ``lsof``); ``Bash(npm run test:*)``: the legacy prefix form, the same
  as ``Bash(npm run test *)``.
- ``Read(path)``: the ``read``, ``grep``, ``find`` and ``ls`` tools;
  ``Edit(path)`` and ``Write(path)``: the ``edit`` and ``write`` tools
  (either name covers both).  Paths are gitignore-style: ``//abs/path``,
  ``~/in/home``, ``/from/the/project/root``, ``./from/the/cwd`` (a bare
  ``src/x`` too); a name without a slash (``.env``, ``*.pem``) matches at
  any depth.  ``*`` stays within a directory, ``**`` spans them, and a
  pattern that names a directory covers everything under it.
- Any other name is a tool name: ``mcp__server__tool``, ``mcp__server__*``,
  ``mcp__server`` (all of that server's tools), ``my_lua_tool``.

Rules are matched by :mod:`panto.policy.permissions`; this module parses
them and answers "does this rule cover this command / path / tool".
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property

__all__ = [
    "BASH",
    "EDIT",
    "READ",
    "Rule",
    "check_rule",
    "family",
    "parse_rule",
    "path_candidates",
]

BASH, READ, EDIT = "Bash", "Read", "Edit"

#: panto's tool name -> the rule family that covers it
_TOOL_FAMILY = {
    "bash": BASH,
    "read": READ,
    "grep": READ,
    "find": READ,
    "ls": READ,
    "write": EDIT,
    "edit": EDIT,
}

#: rule name (as Claude Code writes it, or lower case) -> (family, the tools it covers)
_RULE_NAMES: dict[str, tuple[str, frozenset[str]]] = {
    "bash": (BASH, frozenset({"bash"})),
    "read": (READ, frozenset({"read", "grep", "find", "ls"})),
    "grep": (READ, frozenset({"grep"})),
    "glob": (READ, frozenset({"find"})),
    "find": (READ, frozenset({"find"})),
    "ls": (READ, frozenset({"ls"})),
    "edit": (EDIT, frozenset({"edit", "write"})),
    "write": (EDIT, frozenset({"edit", "write"})),
    "multiedit": (EDIT, frozenset({"edit", "write"})),
}

_NAME_RE = re.compile(r"[A-Za-z0-9_*.-]+")


def family(tool: str) -> str | None:
    """The rule family of one of panto's tools (``read`` -> ``Read``)."""
    return _TOOL_FAMILY.get(tool)


def parse_rule(text: str) -> tuple[str, str | None]:
    """``"Bash(rm *)"`` -> ``("Bash", "rm *")``; ``"mcp__s__t"`` ->
    ``("mcp__s__t", None)``.  Raises ``ValueError`` saying what is wrong."""
    t = text.strip()
    if not t:
        raise ValueError("the rule is empty")
    name, paren, rest = t.partition("(")
    name = name.strip()
    if not _NAME_RE.fullmatch(name):
        raise ValueError(f"bad tool name {name!r}")
    if not paren:
        return name, None
    if not rest.endswith(")"):
        raise ValueError("missing the closing ')'")
    spec = rest[:-1].strip()
    if not spec:
        raise ValueError("empty '()': write the tool name alone to cover all of it")
    return name, spec


def check_rule(text: str) -> str | None:
    """Why ``text`` is not a rule (None: it is one)."""
    try:
        parse_rule(text)
    except ValueError as e:
        return str(e)
    return None


@dataclass(frozen=True)
class Rule:
    """One rule, where it came from (``origin``: ``user (PATH)``,
    ``project (PATH)``, ``session``, ``built-in``) and the directories its
    paths are relative to."""

    text: str
    origin: str
    cwd: str = ""
    root: str = ""  # the project root, for /path
    home: str = ""
    #: file names that the rule never covers (the built-in .env rule's exceptions)
    except_names: frozenset[str] = frozenset()
    _compiled: dict[str, re.Pattern[str] | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    @cached_property
    def name(self) -> str:
        return parse_rule(self.text)[0]

    @cached_property
    def spec(self) -> str | None:
        return parse_rule(self.text)[1]

    @cached_property
    def family(self) -> str | None:
        known = _RULE_NAMES.get(self.name.lower())
        return known[0] if known else None

    def __str__(self) -> str:
        return self.text

    def covers_tool(self, tool: str) -> bool:
        """Whether the rule is about ``tool`` at all (its specifier aside)."""
        known = _RULE_NAMES.get(self.name.lower())
        if known is not None:
            return tool in known[1]
        name = self.name
        if tool == name:
            return True
        if name.startswith("mcp__") and name.count("__") == 1:  # mcp__server: all its tools
            return tool.startswith(name + "__")
        if "*" in name:
            return _glob_name(name).fullmatch(tool) is not None
        return False

    @cached_property
    def catch_all(self) -> bool:
        """``Bash`` or ``Bash(*)``: covers every command (it never vouches
        for an opaque one)."""
        return self.spec is None or self.spec.strip("* ") == ""

    def matches_command(self, text: str) -> bool:
        """For a ``Bash`` rule: whether it covers the command ``text``."""
        spec = self.spec
        if spec is None:
            return True
        pat = self._compiled.get("cmd")
        if pat is None:
            pat = self._compiled["cmd"] = _command_pattern(spec)
        return pat.fullmatch(text) is not None

    def matches_path(self, candidates: tuple[str, ...]) -> bool:
        """For a path rule: whether it covers any of ``candidates``
        (absolute paths; see :func:`path_candidates`)."""
        spec = self.spec
        if spec is None:
            return True
        if self.except_names and any(os.path.basename(p) in self.except_names for p in candidates):
            return False
        pat = self._compiled.get("path")
        if pat is None:
            pat = self._compiled["path"] = _path_pattern(spec, self.cwd, self.root, self.home)
        return any(pat.search(p) for p in candidates)


def path_candidates(path: str, cwd: str) -> tuple[str, ...]:
    """The absolute forms of ``path`` a rule is matched against: as written
    (normalised) and with symlinks resolved, so a link does not hide what
    it points at."""
    p = os.path.expanduser(path)
    if not os.path.isabs(p):
        p = os.path.join(cwd, p)
    norm = os.path.normpath(p)
    try:
        real = os.path.realpath(norm)
    except (OSError, ValueError):
        real = norm
    return (norm,) if real == norm else (norm, real)


def _glob_name(name: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in name.split("*")))


def _command_pattern(spec: str) -> re.Pattern[str]:
    if spec.endswith(":*"):  # legacy prefix form
        spec = spec[:-2].rstrip() + " *"
    parts: list[str] = []
    if spec.endswith(" *"):
        head = spec[:-2]
        parts = [".*".join(re.escape(p) for p in head.split("*")), "(?: .*)?"]
    else:
        parts = [".*".join(re.escape(p) for p in spec.split("*"))]
    return re.compile("".join(parts), re.S)


def _glob_regex(glob: str) -> str:
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def _path_pattern(spec: str, cwd: str, root: str, home: str) -> re.Pattern[str]:
    s = spec.rstrip("/") or "/"
    # dir/** covers dir itself too: grep or ls of it reads what is under it
    while s.endswith("/**") and s != "//**":
        s = s[:-3] or "/"
    base: str | None
    if s.startswith("//"):
        base, glob = "/", s[2:]
    elif s == "~" or s.startswith("~/"):
        base, glob = home or os.path.expanduser("~"), s[2:]
    elif s.startswith("/"):
        base, glob = root or cwd, s[1:]
    elif s.startswith("./") or s == ".":
        base, glob = cwd, s[2:]
    elif "/" in s:
        base, glob = cwd, s
    else:
        base, glob = None, s
    under = "(?:/.*)?$"
    if base is None:
        return re.compile("(?:^|/)" + _glob_regex(glob) + under, re.S)
    prefix = "^" + re.escape(os.path.normpath(base).rstrip("/"))
    if not glob:
        return re.compile(prefix + under, re.S)
    return re.compile(prefix + "/" + _glob_regex(glob) + under, re.S)

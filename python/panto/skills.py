"""Agent Skills (the agentskills.io format): folders holding a ``SKILL.md``
whose front matter gives a ``name`` and a ``description``.

Only each skill's name, description and location go into the system prompt
(one ``<available_skills>`` part, sorted by name so the request stays
byte-stable for the prompt cache); the model reads the body with the
``read`` tool when a skill applies.  ``/skill:NAME args`` sends the body and
the arguments as the user's message.

Discovery, nearest first (the first skill of a name wins; a later one of the
same name is reported once):

1. in a trusted project, ``.panto/skills/`` and ``.agents/skills/`` of every
   directory from the working directory up to the repository root (the
   working directory alone outside a repository);
2. the directories of ``[skills] paths``;
3. the user's ``$XDG_CONFIG_HOME/panto/skills/`` and ``~/.agents/skills/``.

Validation is lenient: a skill without a description, or whose front matter
cannot be read, is skipped with a warning naming its file; a name that breaks
the format's rules is used with a warning.  Nothing here raises for a bad
skill.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .paths import home_dir, user_config_dir
from .patterns import LazyPattern

__all__ = [
    "COMMAND_PREFIX",
    "MAX_LISTING_CHARS",
    "Listing",
    "Skill",
    "Skills",
    "discover",
    "expand_command",
    "invocation_text",
    "listing",
    "listing_budget",
    "parse_front_matter",
    "skill_dirs",
]

#: The listing's ceiling in characters (Codex's: 2% of the context window,
#: at most 8,000 characters).
MAX_LISTING_CHARS = 8000
#: Share of the context window (in tokens, about 4 characters each).
_WINDOW_SHARE = 0.02
_CHARS_PER_TOKEN = 4

_NAME = LazyPattern(r"[a-z0-9]+(-[a-z0-9]+)*")
_MAX_NAME = 64
_MAX_DESCRIPTION = 1024
#: Descriptions are cut to these lengths, in turn, before skills are left out.
_SHORTER = (300, 160, 80, 40)

_INTRO = (
    "Skills are folders of instructions for particular tasks. When a task matches a "
    "skill's description, read its SKILL.md (the location below) with the read tool "
    "before acting, and follow it; paths in a skill are relative to its folder."
)


@dataclass(frozen=True)
class Skill:
    """One skill: ``location`` is its ``SKILL.md``; ``hidden`` skills
    (``disable-model-invocation: true``) are left out of the listing but
    still run with ``/skill:NAME``."""

    name: str
    description: str
    location: Path
    hidden: bool = False

    def body(self) -> str:
        """The instructions: ``SKILL.md`` after its front matter."""
        text = self.location.read_text(encoding="utf-8", errors="replace")
        return _split(text)[1].strip()


@dataclass(frozen=True)
class Skills:
    """What :func:`discover` found, and what it had to say about it."""

    skills: tuple[Skill, ...] = ()
    warnings: tuple[str, ...] = ()
    #: the directories that were searched, nearest first
    sources: tuple[Path, ...] = ()

    def get(self, name: str) -> Skill | None:
        for s in self.skills:
            if s.name == name:
                return s
        return None

    @property
    def names(self) -> list[str]:
        return sorted(s.name for s in self.skills)


def skill_dirs(
    cwd: str | os.PathLike[str],
    *,
    project: bool,
    paths: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> list[Path]:
    """The directories searched for skills, nearest first (see the module
    docstring).  ``project``: is the working directory's project trusted?"""
    from .system_prompt import find_repo_root

    out: list[Path] = []
    if project:
        here = Path(cwd).resolve()
        root = find_repo_root(here)
        chain = [here] if root is None else [here, *here.parents]
        if root is not None:
            chain = chain[: chain.index(root) + 1]
        for d in chain:
            out += [d / ".panto" / "skills", d / ".agents" / "skills"]
    home = home_dir(env)
    for p in paths:
        q = home / p[2:] if p.startswith("~/") else Path(p)
        out.append(q if q.is_absolute() else Path(cwd) / q)
    out += [user_config_dir(env) / "skills", home / ".agents" / "skills"]
    return out


def discover(
    cwd: str | os.PathLike[str],
    *,
    project: bool,
    paths: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Skills:
    """Every skill under :func:`skill_dirs`; never raises for a bad skill."""
    dirs = skill_dirs(cwd, project=project, paths=paths, env=env)
    found: dict[str, Skill] = {}
    warnings: list[str] = []
    for d in dirs:
        for f in _skill_files(d):
            skill, problems = _load(f)
            warnings += problems
            if skill is None:
                continue
            first = found.get(skill.name)
            if first is not None:
                warnings.append(
                    f"skill {skill.name!r} in {f} is shadowed by {first.location} (nearer wins)"
                )
                continue
            found[skill.name] = skill
    skills = tuple(sorted(found.values(), key=lambda s: s.name))
    return Skills(skills, tuple(warnings), tuple(dirs))


def _skill_files(d: Path) -> list[Path]:
    """``d/*/SKILL.md``, sorted (a skill is a folder)."""
    try:
        entries = sorted(os.scandir(d), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for e in entries:
        if e.name.startswith("."):
            continue
        f = Path(e.path) / "SKILL.md"
        if f.is_file():
            out.append(f)
    return out


def _load(f: Path) -> tuple[Skill | None, list[str]]:
    try:
        text = f.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        return None, [f"skill {f}: cannot read it ({e.strerror or e}); skipped"]
    head, _ = _split(text)
    if head is None:
        if text.lstrip("\ufeff").split("\n", 1)[0].strip() == "---":
            return None, [
                f"skill {f}: front matter not closed (add a line '---' after it); skipped"
            ]
        return None, [f"skill {f}: no front matter (--- name: ... description: ... ---); skipped"]
    try:
        meta = parse_front_matter(head)
    except ValueError as e:
        return None, [f"skill {f}: bad front matter ({e}); skipped"]
    problems: list[str] = []
    name = meta.get("name")
    name = name.strip() if isinstance(name, str) else ""
    folder = f.parent.name
    if not name:
        name = folder
        problems.append(f"skill {f}: no name; using the folder's name {folder!r}")
    elif not _NAME.fullmatch(name) or len(name) > _MAX_NAME:
        problems.append(
            f"skill {f}: name {name!r} should be 1-64 lowercase letters, digits and single "
            "hyphens (used as it is)"
        )
    elif name != folder:
        problems.append(f"skill {f}: name {name!r} differs from its folder {folder!r}")
    desc = meta.get("description")
    desc = " ".join(desc.split()) if isinstance(desc, str) else ""
    if not desc:
        return None, [
            *problems,
            f"skill {f}: no description; skipped (the model could not tell when to use it)",
        ]
    if len(desc) > _MAX_DESCRIPTION:
        problems.append(
            f"skill {f}: description is {len(desc)} characters (the format allows "
            f"{_MAX_DESCRIPTION}); it may be shortened in the listing"
        )
    hidden = str(meta.get("disable-model-invocation", "")).strip().lower() == "true"
    return Skill(name, desc, f.resolve(), hidden), problems


def _split(text: str) -> tuple[str | None, str]:
    """(front matter, body); front matter None when the file has none."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return "".join(lines[1:i]), "".join(lines[i + 1 :])
    return None, text


def parse_front_matter(text: str) -> dict[str, str | dict[str, str]]:
    """The YAML subset skills use: ``key: value`` (plain, single- or
    double-quoted), block scalars (``|``, ``>``, with ``-``/``+``), and one
    level of nested mapping (``metadata:``).  Raises ``ValueError`` on what
    it cannot read; unknown keys are kept and ignored by the caller."""
    out: dict[str, str | dict[str, str]] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if raw[0] in " \t":
            raise ValueError(f"line {i}: unexpected indentation")
        key, sep, rest = raw.partition(":")
        if not sep or not key.strip():
            raise ValueError(f"line {i}: expected 'key: value'")
        key, rest = key.strip(), rest.strip()
        if rest[:1] in ("|", ">"):
            block: list[str] = []
            while i < len(lines) and (not lines[i].strip() or lines[i][0] in " \t"):
                block.append(lines[i])
                i += 1
            out[key] = _block(block, folded=rest[0] == ">")
        elif rest == "":
            nested: dict[str, str] = {}
            items: list[str] = []
            while i < len(lines) and (not lines[i].strip() or lines[i][0] in " \t"):
                sub = lines[i].strip()
                i += 1
                if not sub or sub.startswith("#"):
                    continue
                if sub.startswith("- "):
                    items.append(_scalar(sub[2:].strip(), i))
                    continue
                k, s, v = sub.partition(":")
                if not s:
                    raise ValueError(f"line {i}: expected 'key: value'")
                nested[k.strip()] = _scalar(v.strip(), i)
            out[key] = nested if nested else " ".join(items)
        else:
            out[key] = _scalar(rest, i)
    return out


def _scalar(v: str, line: int) -> str:
    if v[:1] in ("'", '"'):
        q = v[0]
        end = v.rfind(q)
        if end <= 0:
            raise ValueError(f"line {line}: unterminated quoted string")
        inner = v[1:end]
        if q == "'":
            return inner.replace("''", "'")
        return (
            inner.replace('\\"', '"')
            .replace("\\n", "\n")
            .replace("\\t", "\t")
            .replace("\\\\", "\\")
        )
    if " #" in v:
        v = v.split(" #", 1)[0].rstrip()
    return v


def _block(lines: list[str], *, folded: bool) -> str:
    body = list(lines)
    indents = [len(ln) - len(ln.lstrip()) for ln in body if ln.strip()]
    cut = min(indents) if indents else 0
    stripped = [ln[cut:] if ln.strip() else "" for ln in body]
    if not folded:
        return "\n".join(stripped).strip("\n")
    paras, cur = [], []
    for ln in stripped:
        if ln:
            cur.append(ln.strip())
        else:
            paras.append(" ".join(cur))
            cur = []
    paras.append(" ".join(cur))
    return "\n".join(p for p in paras if p)


# -- the system-prompt part -------------------------------------------------------------


def listing_budget(context_window: int | None) -> int:
    """The listing's size limit in characters: min(2% of the window, 8,000)."""
    if not context_window:
        return MAX_LISTING_CHARS
    return max(0, min(MAX_LISTING_CHARS, int(context_window * _WINDOW_SHARE * _CHARS_PER_TOKEN)))


def _render(items: Iterable[tuple[Skill, str]]) -> str:
    rows = [
        "<skill>\n"
        f"<name>{_xml(s.name)}</name>\n"
        f"<description>{_xml(d)}</description>\n"
        f"<location>{_xml(str(s.location))}</location>\n"
        "</skill>"
        for s, d in items
    ]
    if not rows:
        return ""
    return "\n".join(["<available_skills>", _INTRO, *rows, "</available_skills>"])


def _xml(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cut(desc: str, n: int) -> str:
    return desc if len(desc) <= n else desc[: n - 1].rstrip() + "…"


@dataclass(frozen=True)
class Listing:
    """The ``<available_skills>`` part: its text, the skills left out to
    stay within ``budget`` characters, and whether descriptions were cut."""

    text: str
    budget: int
    listed: tuple[str, ...] = ()
    omitted: tuple[str, ...] = ()
    shortened: bool = False
    warnings: tuple[str, ...] = field(default=())


def listing(skills: Skills, *, context_window: int | None = None) -> Listing:
    """The system-prompt part listing the skills the model may use (hidden
    ones left out), within :func:`listing_budget`: descriptions are shortened
    first, then skills left out (last names first) with a warning naming them."""
    budget = listing_budget(context_window)
    visible = [s for s in skills.skills if not s.hidden]
    if not visible:
        return Listing("", budget)
    items = [(s, s.description) for s in visible]
    text = _render(items)
    shortened = False
    for n in _SHORTER:
        if len(text) <= budget:
            break
        items = [(s, _cut(d, n)) for s, d in items]
        shortened = True
        text = _render(items)
    omitted: list[str] = []
    while items and len(text) > budget:
        omitted.append(items.pop()[0].name)
        text = _render(items)
    warnings: list[str] = []
    if omitted:
        omitted.reverse()
        warnings.append(
            f"{len(omitted)} skill(s) left out of the system prompt to stay within "
            f"{budget} characters: {', '.join(omitted)} (they still run with /skill:NAME; "
            "shorten descriptions or hide some with disable-model-invocation)"
        )
    return Listing(
        text,
        budget,
        tuple(s.name for s, _ in items),
        tuple(omitted),
        shortened,
        tuple(warnings),
    )


def invocation_text(skill: Skill, args: str) -> str:
    """The user message ``/skill:NAME args`` sends: the skill's body under
    its name and location, then the arguments."""
    body = skill.body()
    text = (
        f'<skill name="{_xml(skill.name)}" location="{_xml(str(skill.location))}">\n'
        f"{body}\n</skill>"
    )
    args = args.strip()
    return f"{text}\n\n{args}" if args else text


#: What starts a line that runs a skill: ``/skill:NAME args``.
COMMAND_PREFIX = "/skill:"


def expand_command(skills: Skills, line: str) -> str | None:
    """The user message for a ``/skill:NAME args`` line (None when ``line``
    is not one); raises ``LookupError`` naming the known skills when NAME is
    not one of them."""
    text = line.strip()
    if not text.startswith(COMMAND_PREFIX):
        return None
    head, _, args = text[len(COMMAND_PREFIX) :].partition(" ")
    name = head.strip()
    skill = skills.get(name)
    if skill is None:
        known = ", ".join(skills.names) or "none found"
        if not name:
            raise LookupError(
                f"{COMMAND_PREFIX} needs a skill's name: /skill:NAME ARGS (skills: {known})"
            )
        # a skill of that folder that was skipped: say why, not "unknown"
        folder = f"{os.sep}{name}{os.sep}SKILL.md:"
        why = next((w for w in skills.warnings if folder in w and w.endswith("skipped")), None)
        if why is not None:
            raise LookupError(f"{why} (fix the file to run /skill:{name})")
        raise LookupError(
            f"unknown skill {name!r} (skills: {known}; see `panto config system-prompt`)"
        )
    try:
        return invocation_text(skill, args)
    except OSError as e:
        raise LookupError(
            f"skill {name!r}: cannot read {skill.location} ({e.strerror or e})"
        ) from e

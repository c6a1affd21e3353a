"""The ``[extensions]`` policy and the two-pass load plan (seed 002).

Pure Python, no Lua: the runtime evaluates every source (pass one) and hands
the declared entries here as :class:`Candidate` values; :func:`plan_load`
shadows them by name and decides, with the layered :class:`Policy`, which
ones activate (pass two is the runtime calling ``activate`` on
:attr:`LoadPlan.to_activate`).

Names and patterns are dotted: ``std.read``, ``agent.skills``.  In a pattern
a ``*`` segment matches exactly one segment and a ``**`` segment any number
of segments, zero included (``agent.**`` matches ``agent``, ``agent.x`` and
``agent.x.y``; ``**`` matches every name).  A ``*`` inside a segment
(``agent.sk*``) is not a pattern and is rejected.

Resolution: one ordered rule list is built from all layers (low to high);
within a layer the rules are sorted from least to most specific, a ``deny``
after an ``allow`` of equal specificity.  The last rule that matches a name
decides; no match means allow.  Specificity, compared in order: more literal
segments, then more segments, then fewer ``**``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ..errors import ConfigError

__all__ = [
    "KINDS",
    "LAYERS",
    "Candidate",
    "Decision",
    "LayerPolicy",
    "LoadPlan",
    "PlannedEntry",
    "Policy",
    "Rule",
    "Source",
    "check_pattern",
    "format_plan",
    "match",
    "plan_load",
    "specificity",
    "valid_name",
]

#: Extension-source layers, lowest precedence first.
LAYERS: tuple[str, ...] = ("base", "user", "project")
#: Source kinds within one layer, lowest precedence first.
KINDS: tuple[str, ...] = ("rocks", "paths", "dir")

RuleKind = Literal["allow", "deny"]
Status = Literal["active", "denied", "shadowed", "duplicate", "invalid", "failed"]

_SEGMENT = re.compile(r"[A-Za-z0-9_-]+")


def valid_name(name: str) -> bool:
    """A dotted identity: segments of letters, digits, ``_`` and ``-``."""
    return bool(name) and all(_SEGMENT.fullmatch(s) for s in name.split("."))


def check_pattern(pattern: str) -> tuple[str, ...]:
    """The segments of a dotted glob; ValueError (saying why) when it is not one."""
    if not isinstance(pattern, str) or not pattern:
        raise ValueError("a pattern must be a non-empty string")
    segs = tuple(pattern.split("."))
    for s in segs:
        if s in ("*", "**"):
            continue
        if "*" in s:
            raise ValueError(
                f"'{s}' in '{pattern}': '*' and '**' must be whole segments "
                "(`a.*`, `a.**`), not part of one"
            )
        if not _SEGMENT.fullmatch(s):
            raise ValueError(
                f"segment '{s}' in '{pattern}': expected letters, digits, '_' or '-' "
                "(or '*' / '**')"
            )
    return segs


@lru_cache(maxsize=4096)
def _match_segs(pat: tuple[str, ...], name: tuple[str, ...]) -> bool:
    if not pat:
        return not name
    head, rest = pat[0], pat[1:]
    if head == "**":
        # zero segments, or swallow one and stay on `**`
        return _match_segs(rest, name) or (bool(name) and _match_segs(pat, name[1:]))
    if not name:
        return False
    if head == "*" or head == name[0]:
        return _match_segs(rest, name[1:])
    return False


def match(pattern: str, name: str) -> bool:
    """Does the dotted glob ``pattern`` match ``name``?"""
    return _match_segs(check_pattern(pattern), tuple(name.split(".")))


def specificity(pattern: str) -> tuple[int, int, int]:
    """Sort key, higher is more specific: (literal segments, segments, -``**``s)."""
    segs = check_pattern(pattern)
    literal = sum(1 for s in segs if s not in ("*", "**"))
    doubles = sum(1 for s in segs if s == "**")
    return (literal, len(segs), -doubles)


@dataclass(unsafe_hash=True)
class Rule:
    """One ``allow``/``deny`` pattern and where it was written (``origin``:
    the config file, for messages)."""

    layer: str
    kind: RuleKind
    pattern: str
    origin: str | None = None

    @property
    def specificity(self) -> tuple[int, int, int]:
        return specificity(self.pattern)

    def matches(self, name: str) -> bool:
        return match(self.pattern, name)

    def __str__(self) -> str:
        return f'{self.kind} "{self.pattern}" ({self.layer})'


@dataclass(unsafe_hash=True)
class Decision:
    """Whether a name may activate, and the rule that decided (None: the default)."""

    name: str
    allowed: bool
    rule: Rule | None = None

    def __str__(self) -> str:
        return str(self.rule) if self.rule is not None else "default allow"


@dataclass(unsafe_hash=True)
class LayerPolicy:
    """The ``allow``/``deny`` lists of one config layer, as written, and the
    file they came from."""

    layer: str
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    origin: str | None = None


class Policy:
    """The ordered rule list of all layers; :meth:`decide` takes the last match."""

    def __init__(self, layers: Iterable[LayerPolicy] = ()) -> None:
        rules: list[Rule] = []
        for lp in layers:
            rules.extend(self._layer_rules(lp))
        self.rules: tuple[Rule, ...] = tuple(rules)
        self._cache: dict[str, Decision] = {}

    @staticmethod
    def _layer_rules(lp: LayerPolicy) -> list[Rule]:
        rules: list[Rule] = []
        for kind, patterns in (("allow", lp.allow), ("deny", lp.deny)):
            if isinstance(patterns, str) or not isinstance(patterns, (list, tuple)):
                where = f"{lp.origin}: " if lp.origin else f"{lp.layer} layer: "
                raise ConfigError(f"{where}extensions.{kind}: expected a list of dotted globs")
            for p in patterns:
                try:
                    check_pattern(p)
                except ValueError as e:
                    where = f"{lp.origin}: " if lp.origin else f"{lp.layer} layer: "
                    raise ConfigError(f"{where}extensions.{kind}: {e}") from None
                rules.append(Rule(lp.layer, kind, p, lp.origin))  # type: ignore[arg-type]
        # least -> most specific; deny after allow at equal specificity; the
        # pattern text last so that the order rules were written in never
        # changes which rule decides
        rules.sort(key=lambda r: (r.specificity, r.kind == "deny", r.pattern))
        return rules

    def decide(self, name: str) -> Decision:
        d = self._cache.get(name)
        if d is None:
            d = Decision(name, True, None)
            for rule in reversed(self.rules):
                if rule.matches(name):
                    d = Decision(name, rule.kind == "allow", rule)
                    break
            self._cache[name] = d
        return d

    def allowed(self, name: str) -> bool:
        return self.decide(name).allowed

    def __repr__(self) -> str:
        return f"Policy({[str(r) for r in self.rules]!r})"


# --------------------------------------------------------------------------
# two-pass load plan


@dataclass(unsafe_hash=True)
class Source:
    """A precedence slot: one layer's rocks, paths or dirs.

    Sources are totally ordered (project > user > base; within a layer
    rocks < paths < dir), so a name declared twice in one source is an
    error and a name in two sources is shadowing.
    """

    layer: str
    kind: str

    def rank(self, layers: Sequence[str] = LAYERS) -> tuple[int, int]:
        if self.layer not in layers:
            raise ValueError(f"unknown layer '{self.layer}' (known: {', '.join(layers)})")
        if self.kind not in KINDS:
            raise ValueError(f"unknown source kind '{self.kind}' (known: {', '.join(KINDS)})")
        return (layers.index(self.layer), KINDS.index(self.kind))

    def __str__(self) -> str:
        return f"{self.layer} {self.kind}"


class Candidate:
    """One entry declared by a source in pass one.

    ``location`` says where exactly (a file, ``rock:NAME`` ...); ``entry`` is
    the runtime's opaque handle (e.g. the Lua entry with its ``activate``).
    """

    __slots__ = ("entry", "location", "name", "source")

    def __init__(self, name: str, source: Source, location: str, entry: object = None) -> None:
        self.name = name
        self.source = source
        self.location = location
        self.entry = entry

    def __repr__(self) -> str:
        return f"Candidate({self.name!r}, {self.source!r}, {self.location!r})"

    def describe(self) -> str:
        return f"{self.source} {self.location}"


@dataclass(unsafe_hash=True)
class PlannedEntry:
    """What the plan decided for one candidate; ``decision`` is the policy's
    for the name (None if the name is invalid)."""

    candidate: Candidate
    status: Status
    decision: Decision | None = None
    shadowed_by: Candidate | None = None
    duplicate_of: Candidate | None = None
    message: str = ""

    @property
    def name(self) -> str:
        return self.candidate.name

    @property
    def active(self) -> bool:
        return self.status == "active"

    def reason(self) -> str:
        """One line: why this entry is (not) active."""
        if self.status == "shadowed" and self.shadowed_by is not None:
            return f"shadowed by {self.shadowed_by.describe()}"
        if self.status in ("duplicate", "invalid", "failed"):
            return self.message
        return str(self.decision)


@dataclass(unsafe_hash=True)
class LoadPlan:
    """Every candidate with its status, the ones to activate and the errors."""

    entries: list[PlannedEntry]
    to_activate: list[Candidate]
    errors: list[str]

    def by_name(self, name: str) -> list[PlannedEntry]:
        return [e for e in self.entries if e.name == name]

    def status(self, name: str) -> Status | None:
        """The status of the winning candidate for ``name`` (None if unknown)."""
        winners = [e for e in self.by_name(name) if e.status != "shadowed"]
        return winners[0].status if winners else None


def plan_load(
    candidates: Iterable[Candidate],
    policy: Policy,
    *,
    layers: Sequence[str] = LAYERS,
) -> LoadPlan:
    """Shadow ``candidates`` by name, then decide each winner with ``policy``.

    - Within one :class:`Source` a name twice is an error: every copy is
      ``duplicate`` (nothing activates for that name from there; lower
      sources stay shadowed) and ``errors`` names both places.
    - Across sources the highest (project > user > base; rocks < paths < dir
      within a layer) wins; the others are ``shadowed``.
    - The winner is ``active`` if the policy allows its name, else ``denied``.

    ``to_activate`` lists the active candidates from the lowest source to the
    highest, keeping the given order within a source.  Never raises for bad
    input data except an unknown layer or kind (a programming error).
    """
    cands = list(candidates)
    ranks = {id(c): c.source.rank(layers) for c in cands}
    results: dict[int, PlannedEntry] = {}
    errors: list[str] = []

    by_name: dict[str, list[Candidate]] = {}
    for c in cands:
        if not isinstance(c.name, str) or not valid_name(c.name):
            msg = (
                f"invalid extension name {c.name!r} from {c.describe()}: expected dotted "
                "segments of letters, digits, '_' and '-'"
            )
            results[id(c)] = PlannedEntry(c, "invalid", None, message=msg)
            errors.append(msg)
            continue
        by_name.setdefault(c.name, []).append(c)

    for name, group in by_name.items():
        decision = policy.decide(name)
        top = max(ranks[id(c)] for c in group)
        winners = [c for c in group if ranks[id(c)] == top]
        head = winners[0]
        if len(winners) > 1:
            places = " and ".join(c.location for c in winners)
            msg = f"extension '{name}' is declared twice in {head.source}: {places}"
            errors.append(msg)
            for i, c in enumerate(winners):
                other = winners[1] if i == 0 else winners[0]
                results[id(c)] = PlannedEntry(
                    c, "duplicate", decision, duplicate_of=other, message=msg
                )
        else:
            status: Status = "active" if decision.allowed else "denied"
            results[id(head)] = PlannedEntry(head, status, decision)
        for c in group:
            if ranks[id(c)] != top:
                results[id(c)] = PlannedEntry(c, "shadowed", decision, shadowed_by=head)

    entries = [results[id(c)] for c in cands]
    order = sorted(range(len(cands)), key=lambda i: ranks[id(cands[i])])
    to_activate = [cands[i] for i in order if results[id(cands[i])].status == "active"]
    return LoadPlan(entries, to_activate, errors)


def format_plan(plan: LoadPlan) -> str:
    """The table ``panto extensions`` and ``/extensions`` print.

    One row per candidate: name, status, source (layer + kind), where it
    came from, and why (the deciding rule, ``default allow``, or what
    shadows it).  Sorted by name, the winner of a name first.
    """
    rank = {"active": 0, "denied": 0, "duplicate": 0, "invalid": 0, "failed": 0, "shadowed": 1}
    rows = [("NAME", "STATUS", "SOURCE", "LOCATION", "DECIDED BY")]
    for e in sorted(plan.entries, key=lambda e: (str(e.name), rank[e.status])):
        c = e.candidate
        rows.append((str(c.name), e.status, str(c.source), c.location, e.reason()))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4] for r in rows]
    out = [line.rstrip() for line in lines]
    out.extend(f"error: {m}" for m in plan.errors)
    return "\n".join(out) + "\n"

"""luarocks versions, constraints and dependency strings, in Python.

A line-by-line port of ``luarocks.core.vers`` (parse_version, the ``==`` /
``<`` / ``<=`` metamethods, ``match_constraints`` with the pessimistic
``~>``) and of the dependency-string parser in ``luarocks.queries``
(luarocks 3.8; unchanged in 3.13).  The tests check it against luarocks'
own Lua code, so ``panto`` picks the version ``luarocks`` would pick.

Semantics worth knowing (they are luarocks', not ours):

- ``foo 1.4.2`` (no operator) means ``== 1.4.2``; ``=`` and ``!=`` are
  accepted for ``==`` and ``~=``.
- The revision (``-1`` in ``1.4.2-1``) is compared only when *both* sides
  carry one, so ``== 1.4.2`` matches ``1.4.2-1`` and ``1.4.2-2``: only
  ``version-revision`` pins one rock.
- ``==`` needs the same number of components (``1.0`` is not ``== 1``), but
  ``<`` pads with zeros (``1.0 <= 1`` holds).
- ``~> 1.4`` matches ``1.4``, ``1.4.9``, ``1.4-3``, not ``1.5``.
- Words: ``dev``/``scm``/``cvs`` sort above every number, ``rc`` > ``pre``
  > ``beta`` > ``alpha`` below; another word counts as its first byte / 1000.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "Constraint",
    "Dependency",
    "Version",
    "compare_versions",
    "latest",
    "match_constraints",
    "parse_constraints",
    "parse_dep",
    "parse_version",
]

_DELTAS = {
    "dev": 120000000.0,
    "scm": 110000000.0,
    "cvs": 100000000.0,
    "rc": -1000.0,
    "pre": -10000.0,
    "beta": -100000.0,
    "alpha": -1000000.0,
}

_LUA_SPACE = " \t\n\r\f\v"
_REVISION = re.compile(r"(.*)-([0-9]+)", re.S)
_NUMBER = re.compile(r"([0-9]+)[.\-_]*(.*)", re.S)
_WORD = re.compile(r"([A-Za-z]+)[.\-_]*(.*)", re.S)


class Version:
    """A parsed luarocks version; compares exactly like luarocks' version tables."""

    __slots__ = ("parts", "revision", "string")

    def __init__(self, parts: Sequence[float], revision: int | None, string: str) -> None:
        self.parts = tuple(parts)
        self.revision = revision
        self.string = string

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        if len(self.parts) != len(other.parts):
            return False
        if self.parts != other.parts:
            return False
        if self.revision is not None and other.revision is not None:
            return self.revision == other.revision
        return True

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]  # equality ignores a missing revision

    def __lt__(self, other: Version) -> bool:
        a, b = self.parts, other.parts
        for i in range(max(len(a), len(b))):
            ai = a[i] if i < len(a) else 0.0
            bi = b[i] if i < len(b) else 0.0
            if ai != bi:
                return ai < bi
        if self.revision is not None and other.revision is not None:
            return self.revision < other.revision
        return False

    def __le__(self, other: Version) -> bool:
        return not other < self

    def __gt__(self, other: Version) -> bool:
        return other < self

    def __ge__(self, other: Version) -> bool:
        return other <= self

    def __str__(self) -> str:
        return self.string

    def __repr__(self) -> str:
        return f"Version({self.string!r})"


@functools.lru_cache(maxsize=1024)
def parse_version(vstring: str) -> Version:
    """``luarocks.core.vers.parse_version``."""
    v = vstring.lstrip(_LUA_SPACE)  # the Lua pattern only trims the front
    string = v
    revision = None
    m = _REVISION.fullmatch(v)
    if m:
        v, revision = m.group(1), int(m.group(2))
    parts: list[float] = []
    i = 0

    def put(index: int, value: float) -> None:
        if index < len(parts):
            parts[index] = value
        else:
            parts.append(value)

    while v:
        m = _NUMBER.match(v)
        if m:
            number = float(m.group(1))
            if i < len(parts):
                put(i, parts[i] + number / 100000)
            else:
                put(i, number)
            i += 1
        else:
            m = _WORD.match(v)
            if not m:
                put(i, 0.0)  # luarocks warns "could not be parsed" and stops
                break
            token = m.group(1)
            put(i, _DELTAS.get(token, ord(token[0]) / 1000))
        v = m.group(2)
    return Version(parts, revision, string)


def compare_versions(a: str, b: str) -> bool:
    """``vers.compare_versions``: is ``a`` greater than ``b``?"""
    if a == b:
        return False
    return parse_version(a) > parse_version(b)


def _partial_match(version: Version, requested: Version) -> bool:
    for i, ri in enumerate(requested.parts):
        vi = version.parts[i] if i < len(version.parts) else 0.0
        if ri != vi:
            return False
    if requested.revision is not None:
        return requested.revision == version.revision
    return True


@dataclass
class Constraint:
    """One ``op version`` (op: ``==`` ``~=`` ``<`` ``>`` ``<=`` ``>=`` ``~>``)."""

    op: str
    version: Version

    def __hash__(self) -> int:
        return hash((self.op, self.version.string))

    def __str__(self) -> str:
        return f"{self.op} {self.version}"


def match_constraints(version: Version | str, constraints: Iterable[Constraint]) -> bool:
    """``vers.match_constraints``: does ``version`` satisfy all ``constraints``?"""
    if isinstance(version, str):
        version = parse_version(version)
    for c in constraints:
        cv, op = c.version, c.op
        if op == "==":
            ok = version == cv
        elif op == "~=":
            ok = version != cv
        elif op == ">":
            ok = version > cv
        elif op == "<":
            ok = version < cv
        elif op == ">=":
            ok = version >= cv
        elif op == "<=":
            ok = version <= cv
        elif op == "~>":
            ok = _partial_match(version, cv)
        else:  # pragma: no cover - parse_constraints never produces another op
            ok = True
        if not ok:
            return False
    return True


_OPERATORS = {
    "==": "==",
    "~=": "~=",
    ">": ">",
    "<": "<",
    ">=": ">=",
    "<=": "<=",
    "~>": "~>",
    "": "==",
    "=": "==",
    "!=": "~=",
}
_CONSTRAINT = re.compile(r"(@?)([<>=~!]*)[ \t\n\r\f\v]*([A-Za-z0-9._\-]+)[ \t\n\r\f\v,]*(.*)", re.S)


def parse_constraints(text: str) -> tuple[Constraint, ...]:
    """``queries``' parse_constraints: ``">= 1.0, < 2"`` -> two constraints."""
    out: list[Constraint] = []
    rest = text
    while rest:
        m = _CONSTRAINT.match(rest)
        if not m:
            raise ValueError(f"cannot parse the version constraint {rest!r} in {text!r}")
        op = _OPERATORS.get(m.group(2))
        if op is None:
            raise ValueError(f"bad constraint operator '{m.group(2)}' in {text!r}")
        out.append(Constraint(op, parse_version(m.group(3))))
        rest = m.group(4)
    return tuple(out)


_DEP = re.compile(
    r"[ \t\n\r\f\v]*([A-Za-z0-9.\-_]*/?[A-Za-z0-9][A-Za-z0-9.\-_]*)[ \t\n\r\f\v]*([^/]*)", re.S
)


@dataclass
class Dependency:
    """A luarocks dependency string such as ``"panto-agent 1.4.2-1"``."""

    spec: str
    name: str
    namespace: str | None
    constraints: tuple[Constraint, ...]

    def __hash__(self) -> int:
        return hash(self.spec)

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def module(self) -> str:
        """The Lua module to ``require``: the rock name (seed 002)."""
        return self.name

    @property
    def exact(self) -> bool:
        """One ``==`` constraint: luarocks installs it by version directly."""
        return len(self.constraints) == 1 and self.constraints[0].op == "=="

    def matches(self, version: Version | str) -> bool:
        return match_constraints(version, self.constraints)

    def __str__(self) -> str:
        return self.spec


def parse_dep(spec: str) -> Dependency:
    """``queries.from_dep_string``; raises ``ValueError`` with luarocks' reason."""
    if not isinstance(spec, str):
        raise ValueError(f"a rock must be a dependency string, not {type(spec).__name__}")
    m = _DEP.match(spec)
    if not m:
        raise ValueError(f"failed to extract a rock name from {spec!r}")
    ns_name, rest = m.group(1), m.group(2)
    rest_end = m.end(2)
    if spec[rest_end:].strip():
        raise ValueError(f"unexpected '{spec[rest_end:]}' in {spec!r}")
    constraints = parse_constraints(rest)
    namespace = None
    name = ns_name
    if "/" in ns_name:
        namespace, name = ns_name.split("/", 1)
        namespace = namespace or None
    return Dependency(spec.strip(), name, namespace, constraints)


def latest(versions: Iterable[str], constraints: Iterable[Constraint] = ()) -> str | None:
    """The highest of ``versions`` that satisfies ``constraints`` (luarocks'
    ``pick_latest_version``: ``table.sort`` by the version order, take the last)."""
    cons = tuple(constraints)
    ok = [parse_version(v) for v in versions if match_constraints(v, cons)]
    if not ok:
        return None

    def cmp(a: Version, b: Version) -> int:
        return -1 if a < b else (1 if b < a else 0)

    ok.sort(key=functools.cmp_to_key(cmp))
    return ok[-1].string

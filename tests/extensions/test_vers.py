"""luarocks versions and dependency strings: the Python port agrees with
luarocks' own Lua code (luarocks.core.vers + luarocks.queries)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from panto.extensions.vers import latest, match_constraints, parse_dep, parse_version

V = parse_version


def test_bare_version_means_equal() -> None:
    d = parse_dep("panto-agent 1.4.2-1")
    assert d.name == "panto-agent" and d.exact
    assert [(c.op, c.version.string) for c in d.constraints] == [("==", "1.4.2-1")]
    assert d.module == "panto-agent"


def test_pin_gotcha_revision_floats_without_it() -> None:
    """Seed 002: `1.4.2` without `-R` matches every revision of 1.4.2."""
    loose, pinned = parse_dep("x 1.4.2"), parse_dep("x 1.4.2-1")
    assert loose.matches("1.4.2-1") and loose.matches("1.4.2-2")
    assert pinned.matches("1.4.2-1") and not pinned.matches("1.4.2-2")


def test_operators() -> None:
    assert parse_dep("x ~> 1.4").matches("1.4.9-3")
    assert not parse_dep("x ~> 1.4").matches("1.5-1")
    assert parse_dep("x >= 1.0, < 2.0").matches("1.9-1")
    assert not parse_dep("x >= 1.0, < 2.0").matches("2.0-1")
    assert parse_dep("x ~= 1.1").matches("1.2-1") and not parse_dep("x ~= 1.1").matches("1.1-7")
    assert parse_dep("x != 1.1").constraints[0].op == "~="
    assert parse_dep("x = 1.1").constraints[0].op == "=="
    assert parse_dep("x > 1.0-1").matches("1.0-2")
    assert parse_dep("x <= 1.0").matches("1.0-9")
    assert parse_dep("ns/x >= 1").namespace == "ns"
    assert parse_dep("lpeg").constraints == ()


def test_words_and_padding() -> None:
    assert V("1.0rc1") < V("1.0") < V("1.0.1")
    assert V("1.0alpha") < V("1.0beta") < V("1.0pre") < V("1.0rc")
    assert V("scm-1") > V("999")
    assert V("dev") > V("scm")
    assert not V("1.0") == V("1")  # == needs the same length ...  # noqa: SIM201
    assert V("1.0") <= V("1") and V("1") <= V("1.0")  # ... < pads with zeros


@pytest.mark.parametrize("bad", ["x >> 1", "x => 1", "x 1.0 /", "x ! 1", "", "  "])
def test_bad_specs(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_dep(bad)


def test_latest_picks_the_highest_match() -> None:
    vs = ["1.0-1", "1.0-2", "1.1-1", "2.0-1", "2.1rc1-1"]
    assert latest(vs) == "2.1rc1-1"
    assert latest(vs, parse_dep("x ~> 1").constraints) == "1.1-1"
    assert latest(vs, parse_dep("x 1.0").constraints) == "1.0-2"
    assert latest(vs, parse_dep("x < 1").constraints) is None


# -- agreement with luarocks' own Lua code -------------------------------------

LUA = shutil.which("lua5.1") or shutil.which("lua")
LUAROCKS_LUA = Path("/usr/share/lua/5.1/luarocks/core/vers.lua")

ORACLE = r"""
local cfg = require("luarocks.core.cfg")
assert(cfg.init())
local vers = require("luarocks.core.vers")
local queries = require("luarocks.queries")
local out = {}
for line in io.lines(arg[1]) do
  local kind, a, b = line:match("^(%a+)\t([^\t]*)\t(.*)$")
  if kind == "cmp" then
    local va, vb = vers.parse_version(a), vers.parse_version(b)
    out[#out + 1] = string.format("%s %s %s", tostring(va < vb), tostring(va == vb), tostring(va <= vb))
  else
    local q = queries.from_dep_string(a)
    if not q then
      out[#out + 1] = "nil"
    else
      local cs = {}
      for _, c in ipairs(q.constraints) do cs[#cs + 1] = c.op .. c.version.string end
      local v = vers.parse_version(b)
      out[#out + 1] = string.format("%s|%s|%s", q.name, table.concat(cs, ","),
        tostring(vers.match_constraints(v, q.constraints)))
    end
  end
end
io.write(table.concat(out, "\n"), "\n")
"""

needs_oracle = pytest.mark.skipif(
    LUA is None or not LUAROCKS_LUA.is_file(),
    reason="luarocks' Lua sources (/usr/share/lua/5.1/luarocks) and lua5.1 are needed "
    "for the cross-check: apt-get install luarocks",
)

word = st.sampled_from(["alpha", "beta", "rc", "pre", "scm", "dev", "cvs", "a", "x", "Z"])
num = st.integers(0, 30).map(str)
sep = st.sampled_from([".", ".", ".", "-", "_", ""])


@st.composite
def versions(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(num, num, word), min_size=1, max_size=4))
    s = parts[0]
    for p in parts[1:]:
        s += draw(sep) + p
    if draw(st.booleans()):
        s += "-" + draw(st.integers(0, 5).map(str))
    return s


ops = st.sampled_from(["", "==", "~=", "<", ">", "<=", ">=", "~>", "=", "!="])


@st.composite
def dep_strings(draw: st.DrawFn) -> str:
    cons = draw(st.lists(st.tuples(ops, versions()), max_size=3))
    tail = ", ".join(f"{op} {v}" if op else v for op, v in cons)
    return f"rock-{draw(st.integers(0, 3))} {tail}".rstrip()


FIXED_VERSIONS = [
    "1", "1.0", "1.0.0", "1.0-1", "1.0-2", "1.0.1-1", "2.0rc1-1", "2.0-1", "1.0alpha",
    "1.0beta2", "scm-1", "dev-1", "1.2.3.4", "0.9", "10.0", "1.10", "1.9", "1_2", "1a",
    "1.0-0", "3.0pre", "3.0cvs",
]  # fmt: skip


def _oracle(tmp_path: Path, lines: list[str]) -> list[str]:
    f = tmp_path / "cases.txt"
    f.write_text("\n".join(lines) + "\n")
    script = tmp_path / "oracle.lua"
    script.write_text(ORACLE)
    assert LUA is not None
    r = subprocess.run([LUA, str(script), str(f)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def _py_cmp(a: str, b: str) -> str:
    va, vb = V(a), V(b)
    return f"{str(va < vb).lower()} {str(va == vb).lower()} {str(va <= vb).lower()}"


def _py_dep(spec: str, version: str) -> str:
    try:
        d = parse_dep(spec)
    except ValueError:
        return "nil"
    cs = ",".join(c.op + c.version.string for c in d.constraints)
    return f"{d.name}|{cs}|{str(match_constraints(version, d.constraints)).lower()}"


@needs_oracle
def test_comparisons_agree_with_luarocks_on_fixed_versions(tmp_path: Path) -> None:
    pairs = [(a, b) for a in FIXED_VERSIONS for b in FIXED_VERSIONS]
    got = _oracle(tmp_path, [f"cmp\t{a}\t{b}" for a, b in pairs])
    for (a, b), lua in zip(pairs, got):
        assert _py_cmp(a, b) == lua, (a, b)


@needs_oracle
@settings(max_examples=5, deadline=None)
@given(st.lists(st.tuples(versions(), versions()), min_size=50, max_size=50),
       st.lists(st.tuples(dep_strings(), versions()), min_size=50, max_size=50))  # fmt: skip
def test_random_versions_and_dep_strings_agree_with_luarocks(
    tmp_path_factory: pytest.TempPathFactory,
    pairs: list[tuple[str, str]],
    deps: list[tuple[str, str]],
) -> None:
    tmp = tmp_path_factory.mktemp("oracle")
    lines = [f"cmp\t{a}\t{b}" for a, b in pairs] + [f"dep\t{d}\t{v}" for d, v in deps]
    got = _oracle(tmp, lines)
    want = [_py_cmp(a, b) for a, b in pairs] + [_py_dep(d, v) for d, v in deps]
    for line, lua, py in zip(lines, got, want):
        assert py == lua, line

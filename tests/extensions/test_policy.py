"""The [extensions] policy: dotted globs, specificity, layered last-match-wins
(seed 002, decision 5)."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from panto.errors import ConfigError
from panto.extensions.policy import LayerPolicy, Policy, match, specificity


def pol(*layers: tuple[str, list[str], list[str]]) -> Policy:
    return Policy(LayerPolicy(name, allow, deny) for name, allow, deny in layers)


# -- the glob -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "name", "expected"),
    [
        ("agent.rules", "agent.rules", True),
        ("agent.rules", "agent.rule", False),
        ("agent.rules", "agent.rules.x", False),
        ("agent.*", "agent.rules", True),
        ("agent.*", "agent", False),  # `*` is exactly one segment
        ("agent.*", "agent.rules.x", False),
        ("agent.**", "agent", True),  # `**` is any number, zero included
        ("agent.**", "agent.rules", True),
        ("agent.**", "agent.rules.x.y", True),
        ("agent.**", "agents.x", False),
        ("**", "anything.at.all", True),
        ("**", "x", True),
        ("*", "x", True),
        ("*", "x.y", False),
        ("*.read", "std.read", True),
        ("*.read", "std.x.read", False),
        ("**.read", "read", True),
        ("**.read", "a.b.read", True),
        ("a.**.z", "a.z", True),
        ("a.**.z", "a.b.c.z", True),
        ("a.**.z", "a.b.c", False),
        ("a.*.*", "a.b.c", True),
        ("a.*.*", "a.b", False),
        ("a.**.**", "a", True),
    ],
)
def test_glob(pattern: str, name: str, expected: bool) -> None:
    assert match(pattern, name) is expected


@pytest.mark.parametrize("bad", ["agent.sk*", "a..b", "", "a.b*c", "a b", ".a"])
def test_bad_patterns_are_config_errors_naming_file_and_key(bad: str) -> None:
    with pytest.raises(ConfigError) as ei:
        Policy([LayerPolicy("user", allow=[bad], origin="/home/u/.config/panto/config.toml")])
    msg = str(ei.value)
    assert "/home/u/.config/panto/config.toml" in msg
    assert "extensions.allow" in msg


def test_not_a_list_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"extensions\.deny: expected a list"):
        Policy([LayerPolicy("project", deny="agent.*", origin="p.toml")])  # type: ignore[arg-type]


# -- specificity: the three rules, in order -----------------------------------


def test_rule1_more_literal_segments_win() -> None:
    assert specificity("a.b.*") > specificity("a.*")
    assert specificity("a.b.**") > specificity("a.**")
    # literals beat sheer length: a.b (2 literals) > a.*.*.* (1 literal, 4 segments)
    assert specificity("a.b") > specificity("a.*.*.*")


def test_rule2_then_more_segments_win() -> None:
    assert specificity("a.*.*") > specificity("a.*")
    assert specificity("a.*.**") > specificity("a.**")


def test_rule3_then_fewer_double_stars_win() -> None:
    assert specificity("a.*") > specificity("a.**")
    assert specificity("a.*.*") > specificity("a.**.*")


@pytest.mark.parametrize(
    ("specific", "broad", "name"),
    [
        ("a.b.*", "a.**", "a.b.c"),
        ("a.b.**", "a.**", "a.b.c"),
        ("a.*.*", "a.**", "a.b.c"),
        ("a.*", "a.**", "a.b"),
        ("a.b", "a.*", "a.b"),
    ],
)
def test_specific_rule_wins_in_one_layer_whatever_its_kind(
    specific: str, broad: str, name: str
) -> None:
    assert match(specific, name) and match(broad, name)
    # specific allow beats broad deny, and specific deny beats broad allow
    assert pol(("base", [specific], [broad])).decide(name).allowed
    assert not pol(("base", [broad], [specific])).decide(name).allowed
    assert pol(("base", [specific], [broad])).decide(name).rule.pattern == specific  # type: ignore[union-attr]


def test_deny_after_allow_at_equal_specificity() -> None:
    p = pol(("base", ["agent.*"], ["agent.*"]))
    d = p.decide("agent.x")
    assert not d.allowed and d.rule is not None and d.rule.kind == "deny"
    # two different patterns of equal specificity, both matching
    p = pol(("base", ["*.rules"], ["agent.*"]))
    assert not p.decide("agent.rules").allowed


# -- the worked examples of seed 002 ------------------------------------------


def test_seed_example_single_section() -> None:
    """[extensions] allow = ["agent.rules"], deny = ["agent.*"]."""
    p = pol(("project", ["agent.rules"], ["agent.*"]))
    assert p.decide("agent.rules").allowed
    d = p.decide("agent.skills")
    assert not d.allowed and d.rule is not None and d.rule.pattern == "agent.*"
    assert p.decide("std.read").allowed and p.decide("std.read").rule is None


def test_seed_example_base_carve_out_and_user_union() -> None:
    """base: deny agent.*, allow agent.rules; user: allow foo.bar -- both survive."""
    p = pol(("base", ["agent.rules"], ["agent.*"]), ("user", ["foo.bar"], []))
    assert p.decide("agent.rules").allowed
    assert p.decide("agent.rules").rule.layer == "base"  # type: ignore[union-attr]
    assert not p.decide("agent.skills").allowed
    assert p.decide("foo.bar").allowed
    assert p.decide("foo.bar").rule.layer == "user"  # type: ignore[union-attr]
    assert p.decide("other").allowed and p.decide("other").rule is None


def test_default_is_allow() -> None:
    p = Policy()
    d = p.decide("anything.goes")
    assert d.allowed and d.rule is None and str(d) == "default allow"


def test_whitelist_is_deny_all_plus_allows() -> None:
    p = pol(("user", ["std.read", "std.edit", "agent.**"], ["**"]))
    for name in ("std.read", "std.edit", "agent", "agent.skills", "agent.x.y"):
        assert p.decide(name).allowed, name
    for name in ("std.bash", "std.write", "foo", "x.y.z"):
        d = p.decide(name)
        assert not d.allowed and d.rule is not None and d.rule.pattern == "**", name


def test_higher_layer_broad_rule_beats_lower_layer_specific_rule() -> None:
    # base carves agent.rules out; the user turns the whole group off
    p = pol(("base", ["agent.rules"], ["agent.*"]), ("user", [], ["agent.**"]))
    d = p.decide("agent.rules")
    assert not d.allowed and d.rule is not None
    assert (d.rule.layer, d.rule.pattern) == ("user", "agent.**")
    # and the other way round: base denies one tool, project allows everything
    p = pol(("base", [], ["std.bash"]), ("project", ["**"], []))
    assert p.decide("std.bash").allowed
    # a lower layer still decides names the higher layer does not touch
    p = pol(("base", [], ["std.bash"]), ("project", ["agent.*"], []))
    assert not p.decide("std.bash").allowed


def test_rule_list_order_is_layers_then_specificity_then_deny() -> None:
    p = pol(
        ("base", ["a.b", "**"], ["a.*", "a.b"]),
        ("user", ["x.*"], ["x.**"]),
    )
    assert [(r.layer, r.kind, r.pattern) for r in p.rules] == [
        ("base", "allow", "**"),
        ("base", "deny", "a.*"),
        ("base", "allow", "a.b"),
        ("base", "deny", "a.b"),
        ("user", "deny", "x.**"),
        ("user", "allow", "x.*"),
    ]


def test_decision_names_layer_kind_pattern_and_file() -> None:
    p = Policy([LayerPolicy("user", deny=["std.bash"], origin="/u/config.toml")])
    d = p.decide("std.bash")
    assert d.rule is not None
    assert (d.rule.layer, d.rule.kind, d.rule.pattern, d.rule.origin) == (
        "user",
        "deny",
        "std.bash",
        "/u/config.toml",
    )
    assert str(d) == 'deny "std.bash" (user)'


# -- order independence (hypothesis) ------------------------------------------

SEGS = ["a", "b", "c"]
pattern_st = st.lists(st.sampled_from([*SEGS, "*", "**"]), min_size=1, max_size=4).map(".".join)
name_st = st.lists(st.sampled_from(SEGS), min_size=1, max_size=4).map(".".join)
rules_st = st.lists(st.tuples(st.sampled_from(["allow", "deny"]), pattern_st), max_size=10)


def _layer(name: str, rules: list[tuple[str, str]]) -> LayerPolicy:
    return LayerPolicy(
        name,
        allow=[p for k, p in rules if k == "allow"],
        deny=[p for k, p in rules if k == "deny"],
    )


@settings(max_examples=300, deadline=None)
@given(rules_st, rules_st, st.randoms(use_true_random=False), st.lists(name_st, max_size=8))
def test_resolution_does_not_depend_on_the_order_rules_are_written(
    base: list[tuple[str, str]], user: list[tuple[str, str]], rnd: random.Random, names: list[str]
) -> None:
    ref = Policy([_layer("base", base), _layer("user", user)])
    b2, u2 = base[:], user[:]
    rnd.shuffle(b2)
    rnd.shuffle(u2)
    other = Policy([_layer("base", b2), _layer("user", u2)])
    for n in names:
        assert ref.decide(n) == other.decide(n)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_within_one_specificity_class_order_is_irrelevant(data: st.DataObject) -> None:
    # rules that all share one specificity class, written in any order
    key = data.draw(st.sampled_from(sorted({specificity(p) for p in _all_patterns()})))
    same = [p for p in _all_patterns() if specificity(p) == key]
    chosen = data.draw(
        st.lists(st.tuples(st.sampled_from(["allow", "deny"]), st.sampled_from(same)), max_size=8)
    )
    perm = data.draw(st.permutations(chosen))
    names = data.draw(st.lists(name_st, max_size=6))
    a = Policy([_layer("project", chosen)])
    b = Policy([_layer("project", list(perm))])
    for n in names:
        da, db = a.decide(n), b.decide(n)
        assert da == db
        # the deciding kind is the one a brute-force reading of the rules gives:
        # any matching deny in the class wins over a matching allow
        kinds = {k for k, p in chosen if match(p, n)}
        if kinds:
            assert da.allowed is ("deny" not in kinds)


def _all_patterns() -> list[str]:
    alphabet = [*SEGS[:2], "*", "**"]
    return [".".join(t) for n in (1, 2, 3) for t in itertools.product(alphabet, repeat=n)]


@settings(max_examples=200, deadline=None)
@given(rules_st, name_st)
def test_last_match_wins_equals_a_brute_force_reading(
    rules: list[tuple[str, str]], name: str
) -> None:
    """Independent oracle: the most specific matching rules decide; among
    them a deny wins; nothing matching means allow."""
    d = Policy([_layer("base", rules)]).decide(name)
    hits = [(specificity(p), k) for k, p in rules if match(p, name)]
    if not hits:
        assert d.allowed and d.rule is None
        return
    top = max(s for s, _ in hits)
    kinds = {k for s, k in hits if s == top}
    assert d.allowed is ("deny" not in kinds)

"""Two-pass loading as a pure function: shadowing by declared name, source
precedence, duplicates, and policy decisions (seed 002, decisions 2-4)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from panto.extensions.policy import (
    Candidate,
    LayerPolicy,
    Policy,
    Source,
    format_plan,
    plan_load,
)


def cand(name: str, layer: str, kind: str, location: str = "", entry: object = None) -> Candidate:
    return Candidate(name, Source(layer, kind), location or f"{layer}/{kind}/{name}", entry)


class Probe:
    """An entry whose activate() records that it ran (the side-effect probe)."""

    def __init__(self, log: list[str], tag: str) -> None:
        self.log, self.tag = log, tag

    def activate(self) -> None:
        self.log.append(self.tag)


def activate_all(plan_cands: list[Candidate]) -> None:
    for c in plan_cands:
        act: Callable[[], None] = c.entry.activate  # type: ignore[attr-defined]
        act()


def test_within_a_layer_dir_beats_paths_beats_rocks() -> None:
    cs = [
        cand("x", "user", "rocks", "rock:pkg"),
        cand("x", "user", "dir", "~/.config/panto/extensions/x.lua"),
        cand("x", "user", "paths", "./dev/x.lua"),
        cand("y", "user", "rocks", "rock:pkg"),
        cand("y", "user", "paths", "./dev/y.lua"),
    ]
    plan = plan_load(cs, Policy())
    assert [c.location for c in plan.to_activate] == ["./dev/y.lua", cs[1].location]
    sx = {e.candidate.source.kind: e for e in plan.by_name("x")}
    assert sx["dir"].status == "active"
    assert sx["paths"].status == sx["rocks"].status == "shadowed"
    assert sx["rocks"].shadowed_by is cs[1] and sx["paths"].shadowed_by is cs[1]
    assert plan.status("y") == "active"
    assert plan.by_name("y")[0].shadowed_by is cs[4]


def test_across_layers_project_beats_user_beats_base() -> None:
    cs = [
        cand("a", "project", "rocks"),
        cand("a", "user", "dir"),
        cand("a", "base", "dir"),
        cand("b", "user", "rocks"),
        cand("b", "base", "dir"),
    ]
    plan = plan_load(cs, Policy())
    # a project rock beats a user dir: layer first, kind only within a layer
    assert [c.source for c in plan.to_activate] == [
        Source("user", "rocks"),
        Source("project", "rocks"),
    ]
    assert plan.by_name("a")[1].shadowed_by is cs[0]
    assert plan.by_name("b")[1].shadowed_by is cs[3]


def test_a_local_dev_copy_shadows_the_packaged_rock() -> None:
    """Seed 002 decision 4: `paths` in the same layer beats the rock."""
    cs = [
        cand("agent.skills", "user", "rocks", "rock:panto-agent"),
        cand("agent.skills", "user", "paths", "./dev/agent/skills.lua"),
    ]
    plan = plan_load(cs, Policy())
    assert plan.to_activate == [cs[1]]


def test_same_name_twice_in_one_source_is_an_error_naming_both_places() -> None:
    cs = [
        cand("dup", "project", "dir", ".panto/extensions/one.lua"),
        cand("dup", "project", "dir", ".panto/tools/two.lua"),
        cand("dup", "user", "dir", "~/.config/panto/extensions/dup.lua"),
        cand("ok", "project", "dir", ".panto/extensions/one.lua"),
    ]
    plan = plan_load(cs, Policy())
    assert len(plan.errors) == 1
    msg = plan.errors[0]
    assert "dup" in msg and "one.lua" in msg and "two.lua" in msg and "project dir" in msg
    st = [e.status for e in plan.entries]
    assert st == ["duplicate", "duplicate", "shadowed", "active"]
    assert plan.entries[0].duplicate_of is cs[1] and plan.entries[1].duplicate_of is cs[0]
    assert plan.to_activate == [cs[3]]  # the rest keeps working


def test_a_duplicate_in_a_lower_source_is_shadowed_not_an_error() -> None:
    cs = [
        cand("n", "base", "dir", "a.lua"),
        cand("n", "base", "dir", "b.lua"),
        cand("n", "project", "dir", "c.lua"),
    ]
    plan = plan_load(cs, Policy())
    assert plan.errors == []
    assert plan.to_activate == [cs[2]]


def test_denied_entries_are_evaluated_but_never_activated() -> None:
    log: list[str] = []
    cs = [
        cand("agent.rules", "user", "rocks", entry=Probe(log, "rules")),
        cand("agent.skills", "user", "rocks", entry=Probe(log, "skills")),
        cand("std.read", "base", "dir", entry=Probe(log, "read")),
    ]
    policy = Policy([LayerPolicy("base", allow=["agent.rules"], deny=["agent.*"])])
    plan = plan_load(cs, policy)
    activate_all(plan.to_activate)
    assert log == ["read", "rules"]  # base before user; skills denied
    denied = plan.by_name("agent.skills")[0]
    assert denied.status == "denied"
    assert denied.decision is not None and denied.decision.rule is not None
    assert (
        denied.decision.rule.layer,
        denied.decision.rule.kind,
        denied.decision.rule.pattern,
    ) == (
        "base",
        "deny",
        "agent.*",
    )
    assert str(plan.by_name("std.read")[0].decision) == "default allow"


def test_policy_applies_to_the_winner_only() -> None:
    log: list[str] = []
    cs = [
        cand("x", "base", "dir", entry=Probe(log, "base")),
        cand("x", "project", "dir", entry=Probe(log, "project")),
    ]
    plan = plan_load(cs, Policy([LayerPolicy("user", deny=["x"])]))
    activate_all(plan.to_activate)
    assert log == []  # denied by name: no fallback to the shadowed copy
    assert [e.status for e in plan.entries] == ["shadowed", "denied"]


def test_activation_order_is_low_to_high_then_discovery_order() -> None:
    cs = [
        cand("p2", "project", "dir"),
        cand("b1", "base", "dir"),
        cand("u1", "user", "paths"),
        cand("u0", "user", "rocks"),
        cand("b2", "base", "dir"),
        cand("p1", "project", "rocks"),
    ]
    plan = plan_load(cs, Policy())
    assert [c.name for c in plan.to_activate] == ["b1", "b2", "u0", "u1", "p1", "p2"]


def test_invalid_names_are_reported_not_raised() -> None:
    cs = [cand("bad name", "user", "dir"), cand("good", "user", "dir")]
    plan = plan_load(cs, Policy())
    assert plan.entries[0].status == "invalid"
    assert "bad name" in plan.errors[0]
    assert plan.to_activate == [cs[1]]


def test_unknown_layer_or_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown layer"):
        plan_load([cand("x", "global", "dir")], Policy())
    with pytest.raises(ValueError, match="unknown source kind"):
        plan_load([cand("x", "user", "zip")], Policy())


def test_custom_layer_order() -> None:
    cs = [cand("x", "site", "dir"), cand("x", "user", "dir")]
    plan = plan_load(cs, Policy(), layers=("base", "user", "site", "project"))
    assert plan.to_activate == [cs[0]]


def test_format_plan_shows_source_status_and_deciding_rule() -> None:
    cs = [
        cand("agent.rules", "user", "rocks", "rock:panto-agent"),
        cand("agent.skills", "user", "rocks", "rock:panto-agent"),
        cand("agent.skills", "project", "paths", "./dev/skills.lua"),
        cand("std.read", "base", "dir", "panto/std/read.lua"),
    ]
    policy = Policy(
        [
            LayerPolicy("base", allow=["agent.rules"], deny=["agent.*"]),
            LayerPolicy("project", allow=["agent.skills"]),
        ]
    )
    text = format_plan(plan_load(cs, policy))
    lines = text.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "SOURCE", "LOCATION", "DECIDED", "BY"]
    row = {ln.split()[0] + ":" + ln.split()[1]: ln for ln in lines[1:]}
    assert row["agent.rules:active"].endswith('allow "agent.rules" (base)')
    assert row["agent.skills:active"].endswith('allow "agent.skills" (project)')
    assert "project paths" in row["agent.skills:active"]
    assert row["agent.skills:shadowed"].endswith("shadowed by project paths ./dev/skills.lua")
    assert row["std.read:active"].endswith("default allow")

"""panto.policy.rules and the decisions of panto.policy.permissions."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from panto.policy.permissions import Permissions, RuleSet
from panto.policy.rules import Rule, check_rule, parse_rule, path_candidates
from panto.tools import ToolCall


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("Bash", ("Bash", None)),
        ("Bash(npm run test:*)", ("Bash", "npm run test:*")),
        ("Bash(echo (a))", ("Bash", "echo (a)")),
        ("Read(./secrets/**)", ("Read", "./secrets/**")),
        ("mcp__server__tool", ("mcp__server__tool", None)),
        ("mcp__server__*", ("mcp__server__*", None)),
        (" Edit(src/**) ", ("Edit", "src/**")),
    ],
)
def test_parse_rule(text: str, parsed: tuple[str, str | None]) -> None:
    assert parse_rule(text) == parsed


@pytest.mark.parametrize("text", ["", "Bash(", "Bash()", "Ba sh", "Bash(x) y", "(x)"])
def test_bad_rules_say_why(text: str) -> None:
    assert check_rule(text)


@pytest.mark.parametrize(
    ("spec", "command", "hit"),
    [
        ("rm *", "rm f", True),
        ("rm *", "rm", True),
        ("rm *", "rmdir f", False),
        ("rm*", "rmdir f", True),
        ("npm run test:*", "npm run test", True),
        ("npm run test:*", "npm run test --watch", True),
        ("npm run test:*", "npm run testing", False),
        ("git status", "git status", True),
        ("git status", "git status -s", False),
        ("git * main", "git push origin main", True),
        ("*", "anything at all", True),
    ],
)
def test_bash_rule_matching(spec: str, command: str, hit: bool) -> None:
    assert Rule(f"Bash({spec})", "test").matches_command(command) is hit


def _rule(spec: str, tmp: Path) -> Rule:
    return Rule(f"Read({spec})", "test", str(tmp / "cwd"), str(tmp), str(tmp / "home"))


@pytest.mark.parametrize(
    ("spec", "path", "hit"),
    [
        (".env", "cwd/.env", True),
        (".env", "cwd/sub/dir/.env", True),
        (".env", "cwd/.envrc", False),
        ("*.pem", "cwd/keys/a.pem", True),
        ("./secrets/**", "cwd/secrets/a/b", True),
        ("./secrets/**", "cwd/other/secrets/a", False),
        ("./secrets", "cwd/secrets/k", True),  # a directory covers what is under it
        ("secrets/*.txt", "cwd/secrets/a.txt", True),
        ("secrets/*.txt", "cwd/secrets/d/a.txt", False),
        ("secrets/**/*.txt", "cwd/secrets/d/e/a.txt", True),
        ("/cwd/x", "cwd/x", True),  # /path: from the project root
        ("~/notes", "home/notes/n.md", True),
    ],
)
def test_path_rule_matching(spec: str, path: str, hit: bool, tmp_path: Path) -> None:
    r = _rule(spec, tmp_path)
    assert r.matches_path(path_candidates(str(tmp_path / path), str(tmp_path / "cwd"))) is hit


def test_absolute_path_rules(tmp_path: Path) -> None:
    r = Rule("Read(//etc/**)", "test", str(tmp_path))
    assert r.matches_path(("/etc/passwd",))
    assert not r.matches_path(("/home/etc/x",))


def test_symlinks_are_resolved(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "k").write_text("x")
    os.symlink(tmp_path / "secrets" / "k", tmp_path / "innocent")
    r = Rule("Read(./secrets/**)", "test", str(tmp_path))
    assert r.matches_path(path_candidates("innocent", str(tmp_path)))


@pytest.mark.parametrize(
    ("rule", "tool", "hit"),
    [
        ("Read", "grep", True),
        ("Read", "write", False),
        ("Edit", "write", True),
        ("Write", "edit", True),
        ("Glob", "find", True),
        ("mcp__srv__tool", "mcp__srv__tool", True),
        ("mcp__srv__*", "mcp__srv__other", True),
        ("mcp__srv", "mcp__srv__other", True),
        ("mcp__srv", "mcp__srv2__x", False),
        ("mcp__srv__*", "mcp__other__x", False),
        ("my_tool", "my_tool", True),
    ],
)
def test_rule_tools(rule: str, tool: str, hit: bool) -> None:
    assert Rule(rule, "test").covers_tool(tool) is hit


# --------------------------------------------------------------------------- decisions


def gate(tmp_path: Path, mode: str = "default", **rules: list[str]) -> Permissions:
    cwd = str(tmp_path)
    rs = RuleSet.from_layers([("user (test)", rules)], cwd=cwd, root=cwd, home=cwd)
    return Permissions(rs, mode, cwd=cwd)


def bash(cmd: str) -> ToolCall:
    return ToolCall("t1", "bash", {"command": cmd})


def call(name: str, **inp: Any) -> ToolCall:
    return ToolCall("t1", name, inp)


@pytest.mark.parametrize(
    "cmd",
    [
        "rm f",
        "true; rm f",
        "echo a && rm f",
        "timeout 5 rm f",
        "env A=1 rm f",
        "echo f | xargs rm",
        "bash -c 'rm f'",
        "find . | xargs rm",
        "timeout 5 rm -rf d",
        "/bin/rm f",
        "echo $(rm f)",
        "sudo rm -rf /",
        "find . -exec rm {} +",
    ],
)
def test_a_deny_rule_reaches_every_subcommand(cmd: str, tmp_path: Path) -> None:
    g = gate(tmp_path, "dont-ask", allow=["Bash(*)"], deny=["Bash(rm *)"])
    d = g.check(bash(cmd))
    assert d.action == "deny", d
    g2 = gate(tmp_path, "bypass", deny=["Bash(rm *)"])
    assert g2.check(bash(cmd)).action == "deny"  # a deny wins in every mode


def test_every_subcommand_must_be_allowed(tmp_path: Path) -> None:
    g = gate(tmp_path, "dont-ask", allow=["Bash(git status)"])
    assert g.check(bash("git status")).action == "allow"
    d = g.check(bash("git status && touch x"))
    assert d.action == "deny"
    assert "Bash(touch x)" in d.suggest
    assert (
        gate(tmp_path, allow=["Bash(git status)"]).check(bash("git status && touch x")).action
        == "ask"
    )


def test_opaque_commands_need_a_rule_that_names_them(tmp_path: Path) -> None:
    g = gate(tmp_path, "dont-ask", allow=["Bash(*)"])
    assert g.check(bash("python3 -c 'print(1)'")).action == "deny"
    assert g.check(bash("echo 'unterminated")).action == "deny"
    g = gate(tmp_path, "dont-ask", allow=["Bash(python3 -c *)"])
    assert g.check(bash("python3 -c 'print(1)'")).action == "allow"


def test_ask_beats_allow_and_deny_beats_both(tmp_path: Path) -> None:
    g = gate(
        tmp_path, allow=["Bash(git *)"], ask=["Bash(git push *)"], deny=["Bash(git push --force*)"]
    )
    assert g.check(bash("git log")).action == "allow"
    d = g.check(bash("git push origin main"))
    assert (d.action, str(d.rule)) == ("ask", "Bash(git push *)")
    assert g.check(bash("git push --force origin")).action == "deny"


def test_a_project_cannot_allow_what_the_user_asks_about_or_denies(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    rs = RuleSet.from_layers(
        [
            ("user (u.toml)", {"deny": ["Bash(curl *)"], "ask": ["Bash(git push *)"]}),
            ("project (p.toml)", {"allow": ["Bash(curl *)", "Bash(git push *)"]}),
        ],
        cwd=cwd,
        root=cwd,
        home=cwd,
    )
    g = Permissions(rs, "default", cwd=cwd)
    d = g.check(bash("curl http://x"))
    assert (d.action, d.rule and d.rule.origin) == ("deny", "user (u.toml)")
    assert g.check(bash("git push origin")).action == "ask"


def test_env_files_are_denied_by_default_examples_are_not(tmp_path: Path) -> None:
    g = gate(tmp_path, "bypass")
    for path in (".env", ".env.local", "sub/.env.production"):
        d = g.check(call("read", path=path))
        assert d.action == "deny" and d.rule is not None and d.rule.origin == "built-in", path
    assert g.check(call("read", path=".env.example")).action == "allow"
    assert g.check(call("read", path=".envrc")).action == "allow"
    assert g.check(bash("cat .env")).action == "deny"
    assert g.check(bash("grep KEY < .env")).action == "deny"
    assert g.check(bash("cat .env.example")).action == "allow"


def test_path_rules_apply_to_every_read_tool_and_to_bash_arguments(tmp_path: Path) -> None:
    g = gate(tmp_path, "default", deny=["Read(./secrets/**)"])
    assert g.check(call("read", path="secrets/k")).action == "deny"
    assert g.check(call("grep", pattern="x", path="secrets")).action == "deny"
    assert g.check(call("find", pattern="*", path="secrets/d")).action == "deny"
    assert g.check(call("ls", path="./secrets")).action == "deny"
    assert g.check(call("ls", path=".")).action == "allow"
    assert g.check(bash("cat secrets/k")).action == "deny"
    g = gate(tmp_path, "bypass", deny=["Edit(./protected/**)"])
    assert g.check(call("write", path="protected/a", content="")).action == "deny"
    assert (
        g.check(call("edit", path="protected/a", old_string="a", new_string="b")).action == "deny"
    )
    assert g.check(bash("echo x > protected/a")).action == "deny"


def test_modes(tmp_path: Path) -> None:
    w = call("write", path="a.txt", content="x")
    outside = call("write", path=str(tmp_path.parent / "elsewhere.txt"), content="x")
    r = call("read", path="a.txt")
    b = bash("ls")
    m = call("mcp__srv__do")
    expect = {
        "default": ("ask", "ask", "allow", "ask", "ask"),
        "accept-edits": ("allow", "ask", "allow", "ask", "ask"),
        "plan": ("deny", "deny", "allow", "deny", "deny"),
        "dont-ask": ("deny", "deny", "allow", "deny", "deny"),
        "bypass": ("allow", "allow", "allow", "allow", "allow"),
    }
    for mode, want in expect.items():
        g = gate(tmp_path, mode)
        got = tuple(g.check(c).action for c in (w, outside, r, b, m))
        assert got == want, mode


def test_plan_mode_runs_only_explicitly_allowed_commands(tmp_path: Path) -> None:
    g = gate(tmp_path, "plan", allow=["Bash(git log *)", "Bash(*)", "Edit(**)"])
    assert g.check(bash("git log -3")).action == "allow"
    assert g.check(bash("touch x")).action == "deny"  # Bash(*) does not count in plan
    assert g.check(call("write", path="a", content="")).action == "deny"


def test_mcp_rules(tmp_path: Path) -> None:
    g = gate(tmp_path, "dont-ask", allow=["mcp__srv__*"], deny=["mcp__srv__drop"])
    assert g.check(call("mcp__srv__query")).action == "allow"
    assert g.check(call("mcp__srv__drop")).action == "deny"
    assert g.check(call("mcp__other__x")).action == "deny"


def test_without_a_prompt_default_runs_and_an_ask_rule_denies(tmp_path: Path) -> None:
    records: list[dict[str, Any]] = []
    g = gate(tmp_path, "default", ask=["Bash(git push *)"])
    g.record = records.append
    assert g.decide(bash("touch x")) is None
    out = g.decide(bash("git push origin"))
    assert out is not None and out.is_error
    assert "Bash(git push *)" in out.content and "[permissions] ask" in out.content
    assert [(r["decision"], r["by"]) for r in records] == [("allow", "mode"), ("deny", "rule")]


def test_the_approver_decides_and_always_records_a_session_rule(tmp_path: Path) -> None:
    answers = ["once", "always", "deny"]
    seen: list[str] = []
    g = gate(tmp_path, "default")

    def approver(req: Any) -> str:
        seen.append(req.detail)
        return answers.pop(0)

    g.approver = approver
    assert g.decide(bash("make a")) is None
    assert g.decide(bash("make b")) is None
    assert g.check(bash("make b")).action == "allow"  # allow always: Bash(make b)
    out = g.decide(bash("make c"))
    assert out is not None and "declined" in out.content
    assert seen == ["make a", "make b", "make c"]


def test_the_prompt_shows_the_diff_of_a_file_change(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    g = gate(tmp_path)
    c = call("edit", path="a.txt", old_string="two", new_string="TWO")
    detail = g.detail(c, g.check(c))
    assert "-two" in detail and "+TWO" in detail
    c = call("write", path="new.txt", content="hello\n")
    assert "+hello" in g.detail(c, g.check(c))


def test_hooks_can_tighten_and_loosen_but_never_a_deny(tmp_path: Path) -> None:
    from panto.hooks import ToolCallDecision

    g = gate(tmp_path, "dont-ask", allow=["Bash(ls)"], deny=["Bash(rm *)"])
    c = bash("ls")
    out = g.decide(c, ToolCallDecision(c, permission="deny", reason="not today"))
    assert out is not None and "not today" in out.content
    g2 = gate(tmp_path, "default", deny=["Bash(rm *)"])
    g2.approver = lambda req: "deny"
    assert g2.decide(bash("make"), ToolCallDecision(c, permission="allow")) is None
    rm = bash("rm f")
    assert g2.decide(rm, ToolCallDecision(rm, permission="allow")) is not None

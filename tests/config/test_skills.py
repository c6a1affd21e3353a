"""Agent Skills (panto.skills): discovery, the ``<available_skills>``
system-prompt part on the wire, its budget, lenient validation, and
``/skill:NAME`` from ``panto -p`` and the REPL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.config import write
from support.trust import trust_project

from panto import skills as sk
from panto.app import open_session
from panto.config import Config
from panto.conversation import Text
from panto.testing import Reply, ScriptedServer

WIRES = ("anthropic-messages", "openai-chat")
PROVIDER = {"anthropic-messages": "anthropic", "openai-chat": "openai"}


def skill(d: Path, name: str, description: str | None, body: str = "", **extra: str) -> Path:
    """A skill folder ``d/name`` with its SKILL.md; returns the file."""
    head = [f"name: {name}"]
    if description is not None:
        head.append(f"description: {description}")
    head += [f"{k}: {v}" for k, v in extra.items()]
    f = d / name / "SKILL.md"
    write(f, "---\n" + "\n".join(head) + "\n---\n" + (body or f"BODY-OF-{name}") + "\n")
    return f


def system_of(body: dict[str, Any], wire: str) -> str:
    if wire == "anthropic-messages":
        s = body.get("system", "")
        return s if isinstance(s, str) else "\n\n".join(b["text"] for b in s)
    c = body["messages"][0]["content"]
    return c if isinstance(c, str) else "\n\n".join(b["text"] for b in c)


@pytest.fixture
def repo(tmp_path: Path, user_dir: Path) -> Path:
    """A repository with skills at the root, in a subdirectory (the working
    directory), in the user's dirs and above the repository; returns the
    working directory."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    cwd = root / "pkg"
    cwd.mkdir()
    skill(root / ".agents" / "skills", "root-skill", "Use for root things.")
    skill(cwd / ".panto" / "skills", "pkg-skill", "Use for package things.")
    skill(cwd / ".agents" / "skills", "shared", "The project's shared skill.")
    skill(user_dir / "skills", "user-skill", "A user-level skill.")
    skill(user_dir / "skills", "shared", "The user's shared skill (shadowed).")
    skill(Path.home() / ".agents" / "skills", "agents-skill", "From ~/.agents.")
    skill(tmp_path / ".agents" / "skills", "above-repo", "Never read: above the repository.")
    skill(
        root / ".agents" / "skills",
        "quiet",
        "Hidden from the model.",
        **{"disable-model-invocation": "true"},
    )
    trust_project(cwd)
    return cwd


def _first_request(cwd: Path, wire: str, prompt: str = "hi") -> dict[str, Any]:
    with ScriptedServer() as server:
        server.push(Reply([Text("ok")]))
        config = Config.load(cwd=cwd).with_model(f"{PROVIDER[wire]}/m")
        config.base_url = server.base_url(wire)
        config.api_key = "sk-test"
        with open_session(config, cwd=cwd, session=None, extensions=False) as s:
            s.agent.submit_user_message(prompt)
            with s.agent.run() as stream:
                list(stream)
        return server.requests[0].json


@pytest.mark.parametrize("wire", WIRES)
def test_first_request_lists_the_skills_sorted_without_bodies(repo: Path, wire: str) -> None:
    body = _first_request(repo, wire)
    text = system_of(body, wire)
    block = text[text.index("<available_skills>") : text.index("</available_skills>")]
    names = [line[6:-7] for line in block.splitlines() if line.startswith("<name>")]
    assert names == ["agents-skill", "pkg-skill", "root-skill", "shared", "user-skill"]
    assert "The project's shared skill." in block and "(shadowed)" not in block
    assert f"<location>{repo / '.agents' / 'skills' / 'shared' / 'SKILL.md'}</location>" in block
    assert "above-repo" not in text and "quiet" not in text
    assert "BODY-OF-" not in str(body)  # bodies are read on use, not sent up front
    # byte-stable: a second run sends the same system prompt
    assert system_of(_first_request(repo, wire), wire) == text


def test_untrusted_project_skills_are_not_listed(repo: Path) -> None:
    from panto.policy.trust import set_trust

    set_trust(repo, False)
    text = system_of(_first_request(repo, "openai-chat"), "openai-chat")
    assert "<name>user-skill</name>" in text
    assert "pkg-skill" not in text and "root-skill" not in text
    assert "The user's shared skill" in text  # the project's one is not there to shadow it
    found = sk.discover(repo, project=False)
    assert found.names == ["agents-skill", "shared", "user-skill"]
    assert str(found.get("shared").location).startswith(os.environ["XDG_CONFIG_HOME"])  # type: ignore[union-attr]


def test_lenient_validation_warns_and_never_raises(tmp_path: Path) -> None:
    d = tmp_path / "skills"
    no_desc = skill(d, "no-desc", None)
    write(d / "broken" / "SKILL.md", "---\nname: broken\n  description: [oops\n---\nbody\n")
    skill(d, "Bad--Name", "Odd name but usable.")
    long_desc = skill(d, "long", "x" * 2000)
    write(d / "nofront" / "SKILL.md", "just text, no front matter\n")
    write(d / "unclosed" / "SKILL.md", "---\nname: unclosed\ndescription: d\nbody\n")
    skill(d, "folded", ">\n  Spans\n  two lines.")
    found = sk.discover(tmp_path, project=False, paths=[str(d)], env={"HOME": str(tmp_path)})
    assert found.names == ["Bad--Name", "folded", "long"]
    assert found.get("folded").description == "Spans two lines."  # type: ignore[union-attr]
    joined = "\n".join(found.warnings)
    assert f"skill {no_desc}: no description; skipped" in joined
    assert "broken" in joined and "bad front matter" in joined
    assert "'Bad--Name' should be 1-64 lowercase" in joined
    assert f"skill {long_desc}: description is 2000 characters" in joined
    assert "nofront" in joined and "no front matter" in joined
    unclosed = d / "unclosed" / "SKILL.md"
    assert f"skill {unclosed}: front matter not closed (add a line '---' after it)" in joined


def test_three_hundred_skills_stay_within_the_budget(tmp_path: Path) -> None:
    d = tmp_path / "many"
    for i in range(300):
        skill(d, f"skill-{i:03d}", f"Skill number {i}. " + "detail " * 140)
    found = sk.discover(tmp_path, project=False, paths=[str(d)], env={"HOME": str(tmp_path)})
    assert len(found.skills) == 300
    part = sk.listing(found, context_window=200_000)
    assert part.budget == 8000 and len(part.text) <= 8000
    assert part.shortened and part.omitted and part.listed
    assert list(part.listed) == sorted(part.listed)  # the first names kept, the last left out
    assert part.omitted[-1] == "skill-299"
    assert len(part.warnings) == 1 and "skill-299" in part.warnings[0]
    # a small window gets 2% of it
    small = sk.listing(found, context_window=20_000)
    assert small.budget == 1600 and len(small.text) <= 1600


def test_budget_warning_reaches_the_user(tmp_path: Path, user_dir: Path) -> None:
    for i in range(300):
        skill(user_dir / "skills", f"s-{i:03d}", "d " * 500)
    notes: list[str] = []
    with open_session(
        cwd=tmp_path, model="mock/anthropic", session=None, extensions=False, notify=notes.append
    ) as s:
        text = s.system_prompt.text
    assert any("left out of the system prompt" in n and "s-299" in n for n in notes), notes
    block = text[text.index("<available_skills>") : text.index("</available_skills>") + 20]
    assert len(block) <= 8000


def test_skill_command_in_print_mode_sends_body_and_args(repo: Path) -> None:
    """``panto -p "/skill:quiet ARGS"`` works for a hidden skill: the user
    message is the body plus the arguments; an unknown skill exits 2."""
    with ScriptedServer() as server:
        server.push(Reply([Text("done")]))
        write(
            Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "config.toml",
            f'model = "local/m"\n[providers.local]\nwire = "openai-chat"\n'
            f'base_url = "{server.base_url("openai-chat")}"\nrequires_key = false\n',
        )
        env = {**os.environ, "PANTO_STARTUP_CACHE": "0"}
        r = subprocess.run(
            [sys.executable, "-m", "panto", "-p", "/skill:quiet extract a.pdf", "--no-session"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert r.returncode == 0, r.stderr
        body = server.requests[0].json
        bad = subprocess.run(
            [sys.executable, "-m", "panto", "-p", "/skill:nope x", "--no-session"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
    user = body["messages"][-1]["content"]
    user = user if isinstance(user, str) else "".join(b.get("text", "") for b in user)
    assert "BODY-OF-quiet" in user and user.rstrip().endswith("extract a.pdf")
    assert "<name>quiet</name>" not in system_of(body, "openai-chat")
    assert bad.returncode == 2 and "unknown skill 'nope'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_panto_config_system_prompt_shows_the_skills_part(repo: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "panto", "config", "-C", str(repo), "system-prompt"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "--- skills: 5 skill(s) from " in r.stdout
    assert "<name>pkg-skill</name>" in r.stdout


def test_front_matter_subset() -> None:
    meta = sk.parse_front_matter(
        "name: a\n"
        "description: 'it''s quoted'\n"
        'other: "tab\\there"\n'
        "block: |\n  line one\n  line two\n"
        "metadata:\n  author: me\n  version: '1'\n"
        "# a comment\n"
        "plain: value # trailing comment\n"
    )
    assert meta["description"] == "it's quoted"
    assert meta["other"] == "tab\there"
    assert meta["block"] == "line one\nline two"
    assert meta["metadata"] == {"author": "me", "version": "1"}
    assert meta["plain"] == "value"
    with pytest.raises(ValueError, match="line 1"):
        sk.parse_front_matter("  indented: x")
    with pytest.raises(ValueError, match="unterminated"):
        sk.parse_front_matter("a: 'oops")


def test_skill_command_without_a_name_or_for_a_skipped_skill_says_why(
    tmp_path: Path, user_dir: Path
) -> None:
    """``/skill:`` alone names the form; ``/skill:NAME`` of a skill panto
    skipped says why it was skipped, not "unknown skill"."""
    skill(user_dir / "skills", "good", "A good skill.")
    write(user_dir / "skills" / "broken" / "SKILL.md", "---\nname: broken\nno end\n")
    env = {**os.environ, "PANTO_STARTUP_CACHE": "0"}

    def run(prompt: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "panto", "-p", prompt, "--model", "mock/anthropic"]
            + ["--no-session"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )

    r = run("/skill:")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        "panto: /skill: needs a skill's name: /skill:NAME ARGS (skills: good)"
    )
    r = run("/skill:broken x")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert "broken/SKILL.md: front matter not closed" in last, r.stderr
    assert last.endswith("(fix the file to run /skill:broken)")

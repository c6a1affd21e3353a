"""Layering, precedence, origins, validation and project discovery."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from support.config import write

from panto.config import (
    BASE_CONFIG,
    SCHEMA,
    Config,
    find_project_dir,
    user_config_file,
)
from panto.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def test_base_layer_is_shipped_and_gives_the_defaults() -> None:
    assert BASE_CONFIG.is_file()
    c = Config.load(env={})
    d = Config()
    for attr in ("max_tokens", "max_tool_rounds", "connect_timeout", "read_timeout"):
        assert getattr(c, attr) == getattr(d, attr)
    assert c.origin("max_tokens").layer == "base"
    assert c.origin("max_tokens").source == str(BASE_CONFIG)
    assert c.model_spec == "mock/anthropic" and c.origin("model").layer == "default"


def test_precedence_base_user_project_env_cli(user_dir: Path, project: Path) -> None:
    write(
        user_dir / "config.toml",
        """
        max_tokens = 100
        max_tool_rounds = 7
        system_prompt = "user prompt"
        [timeouts]
        read = 11.0
        connect = 3.0
        """,
    )
    pfile = write(
        project / ".panto" / "config.toml",
        """
        max_tokens = 200
        [timeouts]
        read = 22.0
        """,
    )
    cwd = project / "src" / "deep"
    cwd.mkdir(parents=True)
    env = dict(os.environ, PANTO_MAX_TOKENS="300", PANTO_SYSTEM_PROMPT="env prompt")
    c = Config.load(env, cwd=cwd, overrides={"system_prompt": "cli prompt"})
    assert c.max_tokens == 300 and c.origin("max_tokens").layer == "env"
    assert c.origin("max_tokens").source == "PANTO_MAX_TOKENS"
    assert c.system_prompt == "cli prompt" and c.origin("system_prompt").layer == "cli"
    # tables merge key by key
    assert c.read_timeout == 22.0 and c.origin("timeouts.read").source == str(pfile)
    assert c.connect_timeout == 3.0 and c.origin("timeouts.connect").layer == "user"
    assert c.max_tool_rounds == 7 and c.origin("max_tool_rounds").source == str(user_config_file())
    assert c.max_retries == 4 and c.origin("retries.max").layer == "base"
    assert [layer.name for layer in c.layers] == ["base", "user", "project", "env", "cli"]
    # without env and overrides the project wins
    c2 = Config.load(env={"XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}, cwd=cwd)
    assert c2.max_tokens == 200 and c2.system_prompt == "user prompt"


def test_overrides_dotted_nested_and_attribute_names() -> None:
    c = Config.load(
        env={},
        overrides={
            "model": "openai/gpt-x",
            "tools.timeout": 5,
            "extensions": {"deny": ["std.bash"]},
            'extensions."me.x".greeting': "hi",
        },
        connect_timeout=2.5,
        max_tool_rounds=3,
    )
    assert c.model_spec == "openai/gpt-x" and c.origin("model").layer == "cli"
    assert c.tool_timeout == 5.0 and c.connect_timeout == 2.5 and c.max_tool_rounds == 3
    assert c.origin("timeouts.connect").layer == "cli"
    assert c.extension_settings("me.x") == {"greeting": "hi"}
    assert c.extension_policy().decide("std.bash").allowed is False
    # the old keyword form keeps working
    assert Config.load(env={}, model="anthropic/y").model_spec == "anthropic/y"
    assert Config.load(env={}, provider="openai").model_spec == "openai/gpt-4.1"
    assert Config.load(env={}, provider="openai", model="o3").model_spec == "openai/o3"


def test_default_model_from_keys_and_origin() -> None:
    c = Config.load(env={"ANTHROPIC_API_KEY": "k"})
    assert c.provider == "anthropic" and "ANTHROPIC_API_KEY" in str(c.origin("model"))
    assert Config.load(env={"OPENAI_API_KEY": "k"}).provider == "openai"
    assert Config.load(env={}).provider == "mock"


def test_providers_merge_and_new_provider(user_dir: Path, project: Path) -> None:
    write(
        user_dir / "config.toml",
        """
        [providers.anthropic]
        headers = { x-one = "1" }
        [providers.local]
        wire = "openai-chat"
        base_url = "http://127.0.0.1:9/v1"
        default_model = "qwen"
        """,
    )
    write(
        project / ".panto" / "config.toml",
        """
        model = "local"
        [providers.anthropic]
        headers = { x-two = "2" }
        base_url = "http://proxy"
        """,
    )
    c = Config.load(cwd=project)
    a = c.providers["anthropic"]
    assert dict(a.headers) == {"x-one": "1", "x-two": "2"} and a.base_url == "http://proxy"
    assert a.api_key_env == "ANTHROPIC_API_KEY"  # untouched built-in values stay
    assert c.model_spec == "local/qwen" and c.wire == "openai-chat"
    assert c.resolve_api_key() is None  # a keyless local server


def test_extension_lists_kept_per_layer(user_dir: Path, project: Path) -> None:
    write(
        BASE := user_dir / "base.toml",
        """
        [extensions]
        deny = ["agent.*"]
        allow = ["agent.rules"]
        """,
    )
    write(user_dir / "config.toml", '[extensions]\nallow = ["foo.bar"]\nrocks = ["a 1.0-1"]\n')
    write(
        project / ".panto" / "config.toml",
        '[extensions]\ndeny = ["agent.**"]\nrocks = ["b ~> 2"]\npaths = ["dev", "/abs"]\n',
    )
    c = Config.load(cwd=project, base_file=BASE)
    pol = c.extension_policy()
    # seed 002: a higher layer's broad rule beats a lower layer's specific one
    assert not pol.allowed("agent.rules") and not pol.allowed("agent.skills")
    assert pol.allowed("foo.bar") and pol.allowed("std.read")
    assert str(pol.decide("agent.rules")) == 'deny "agent.**" (project)'
    assert c.extension_rocks() == [("user", "a 1.0-1"), ("project", "b ~> 2")]
    assert c.extension_paths(cwd="/srv/proj") == [
        ("project", Path("/srv/proj/dev")),
        ("project", Path("/abs")),
    ]
    # merged view concatenates
    assert c.data["extensions"]["rocks"] == ["a 1.0-1", "b ~> 2"]
    # --deny flags are one more layer on top
    assert not c.extension_policy(deny=["foo.*"]).allowed("foo.bar")


def test_relative_dirs(user_dir: Path, project: Path) -> None:
    write(
        user_dir / "config.toml",
        '[extensions]\nrock_servers = ["mirror", "https://x.org/r"]\n[session]\ndir = "sess"\n',
    )
    c = Config.load(cwd=project)
    assert c.rock_servers == [str(user_dir / "mirror"), "https://x.org/r"]
    assert c.session_dir == str(user_dir / "sess")
    assert c.extension_paths() == []


# --------------------------------------------------------------------------
# validation: every error names the file, the dotted key and the expectation

BAD = [
    ('max_tokens = "many"', "max_tokens", "expected an integer >= 1"),
    ("max_tokens = 0", "max_tokens", "expected an integer >= 1"),
    ("max_tokens = true", "max_tokens", "expected an integer"),
    ("max_tool_rounds = -1", "max_tool_rounds", "expected an integer >= 0"),
    ("thinking_budget = 1.5", "thinking_budget", "expected an integer"),
    ('reasoning_effort = "max"', "reasoning_effort", 'expected one of "minimal"'),
    ("model = 3", "model", "expected provider/model"),
    ('model = "nope/x"', "model", "expected provider/model with a provider of"),
    ("system_prompt = []", "system_prompt", "expected a string"),
    ("bogus = 1", "bogus", "expected one of: append_system_prompt, base_url, cache"),
    ("[timeouts]\nread = 0", "timeouts.read", "expected a number > 0"),
    ('[timeouts]\nread = "2s"', "timeouts.read", "expected a number > 0"),
    (
        "[timeouts]\nwrite = 1",
        "timeouts.write",
        "expected one of: connect, first_byte, idle, read, retry_wait_max",
    ),
    ("[retries]\nmax = 1.5", "retries.max", "expected an integer >= 0"),
    ("[retries]\nbase_delay = -1", "retries.base_delay", "expected a number >= 0"),
    ("timeouts = 5", "timeouts", "expected a table"),
    ('[providers.x]\nwire = "grpc"', "providers.x.wire", 'expected one of "openai-chat"'),
    ('[providers.x]\nbase_url = "http://h"', "providers.x", "needs wire"),
    ("[providers.openai]\nheaders = { a = 1 }", "providers.openai.headers.a", "expected a string"),
    ("[providers.openai]\napi_key = 5", "providers.openai.api_key", "expected a string"),
    ("[providers.openai]\ncolour = 1", "providers.openai.colour", "expected one of: api_key"),
    ('[providers.openai]\nrequires_key = "yes"', "providers.openai.requires_key", "true or false"),
    ('[providers."a b"]\nwire = "openai-chat"', 'providers."a b"', "expected a provider name"),
    ("[tools]\ntimeout = -3", "tools.timeout", "expected a number > 0"),
    ('[tools.timeouts]\nbash = "long"', "tools.timeouts.bash", "expected a number > 0"),
    ("[tools]\nenabled = true", "tools.enabled", "expected one of: timeout, timeouts"),
    ('[extensions]\nallow = "std.*"', "extensions.allow", "expected an array of dotted globs"),
    ('[extensions]\ndeny = ["std.b*"]', "extensions.deny[0]", "expected a dotted glob"),
    ("[extensions]\ndeny = [1]", "extensions.deny", "expected an array of dotted globs"),
    ('[extensions]\nrocks = ["x >= "]', "extensions.rocks[0]", "expected a luarocks dependency"),
    ("[extensions]\npaths = [1]", "extensions.paths", "expected an array of directories"),
    ('[extensions]\nrock_servers = "u"', "extensions.rock_servers", "expected an array of rock"),
    ('[extensions]\nalow = ["x"]', "extensions.alow", "expected one of: allow, deny"),
    ('[extensions."a b"]\nx = 1', 'extensions."a b"', "expected dotted segments"),
    ('[session]\ndurability = "always"', "session.durability", 'expected one of "fsync"'),
    ("[session]\ndir = 1", "session.dir", "expected a string"),
    ("x = [", "", "invalid TOML"),
]


@pytest.mark.parametrize(("text", "key", "expected"), BAD, ids=[b[1] or "toml" for b in BAD])
def test_every_error_names_file_key_and_expectation(
    project: Path, text: str, key: str, expected: str
) -> None:
    f = write(project / ".panto" / "config.toml", text + "\n")
    with pytest.raises(ConfigError) as info:
        Config.load(env={}, cwd=project)
    msg = str(info.value)
    assert msg.startswith(f"{f}: "), msg
    assert key in msg and expected in msg, msg


def test_user_file_errors_name_the_user_file(user_dir: Path) -> None:
    f = write(user_dir / "config.toml", "max_tokens = -1\n")
    with pytest.raises(ConfigError, match=re.escape(f"{f}: max_tokens: expected")):
        Config.load()


def test_env_and_cli_errors_name_their_source() -> None:
    with pytest.raises(ConfigError) as info:
        Config.load(env={"PANTO_MAX_TOKENS": "many"})
    assert "PANTO_MAX_TOKENS" in str(info.value) and "max_tokens: expected an integer" in str(
        info.value
    )
    with pytest.raises(ConfigError, match="PANTO_READ_TIMEOUT: timeouts.read: expected a number"):
        Config.load(env={"PANTO_READ_TIMEOUT": "soon"})
    with pytest.raises(ConfigError, match="command line: unknown key tools.timeoutz"):
        Config.load(env={}, overrides={"tools.timeoutz": 1})
    with pytest.raises(ConfigError, match="command line: max_tokens: expected an integer"):
        Config.load(env={}, overrides={"max_tokens": "x"})


def test_api_key_never_in_repr_or_errors(user_dir: Path) -> None:
    write(user_dir / "config.toml", '[providers.openai]\napi_key = "sk-supersecret"\n')
    c = Config.load(model="openai/x")
    assert c.resolve_api_key() == "sk-supersecret"
    assert "sk-supersecret" not in repr(c)
    assert "sk-supersecret" not in repr(c.providers)
    assert "sk-supersecret" not in str(c.lua_view())
    assert all("sk-supersecret" not in v for _, v, _ in c.explain())


# --------------------------------------------------------------------------
# project discovery


def test_project_discovery_walks_up_to_the_repo_root(tmp_path: Path, project: Path) -> None:
    deep = project / "a" / "b" / "c"
    deep.mkdir(parents=True)
    write(project / ".panto" / "config.toml", "max_tokens = 5\n")
    assert find_project_dir(deep) == project / ".panto"
    assert Config.load(env={}, cwd=deep).max_tokens == 5
    # a nearer .panto wins
    (project / "a" / ".panto").mkdir()
    write(project / "a" / ".panto" / "config.toml", "max_tokens = 6\n")
    assert Config.load(env={}, cwd=deep).max_tokens == 6


def test_project_discovery_stops_at_the_repo_root(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    write(outer / ".panto" / "config.toml", "max_tokens = 9\n")
    repo = outer / "repo"
    (repo / ".git").mkdir(parents=True)
    cwd = repo / "src"
    cwd.mkdir()
    assert find_project_dir(cwd) is None
    assert Config.load(env={}, cwd=cwd).max_tokens == 8192
    # a .git file (worktree, submodule) is a repo root too
    sub = outer / "sub"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: elsewhere\n")
    assert find_project_dir(sub) is None


def test_project_discovery_without_repo_walks_to_the_filesystem_root(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    write(outer / ".panto" / "config.toml", "max_tokens = 9\n")
    cwd = outer / "x" / "y"
    cwd.mkdir(parents=True)
    assert find_project_dir(cwd) == outer / ".panto"
    assert Config.load(env={}, cwd=cwd).max_tokens == 9


# --------------------------------------------------------------------------
# docs/config.md documents every key


def _keys(spec: object, prefix: str = "") -> list[str]:
    from panto.config import schema as m

    out: list[str] = []
    if isinstance(spec, m.Table):
        for k, sub in spec.fields.items():
            key = f"{prefix}{k}"
            out.append(key)
            out += _keys(sub, key + ".")
    elif isinstance(spec, m.Map):
        out += _keys(spec.value, prefix + "NAME.")
    elif isinstance(spec, m.Extensions):
        out += [f"{prefix}{k}" for k in m.EXT_LISTS]
    return out


def test_docs_document_every_key() -> None:
    doc = (ROOT / "docs" / "config.md").read_text()
    missing = []
    for key in _keys(SCHEMA):
        last = key.split(".")[-1]
        if last == "NAME":
            continue
        forms = (f"`{key}`", f"`{last}`", f"[{key}]", f"`{key}.", f"[{key}.")
        if not any(f in doc for f in forms):
            missing.append(key)
    assert not missing, missing
    for var in __import__("panto.config", fromlist=["ENV_VARS"]).ENV_VARS:
        assert f"`{var}`" in doc, var

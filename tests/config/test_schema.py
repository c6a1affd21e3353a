"""The schema package: one table of keys, defaults in one place, the new
keys validated, and deep nesting reported in one line (D11)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.config import write

from panto.config import Config
from panto.config.explain import toml_value
from panto.config.layers import base_layer, get_key
from panto.config.schema import ENV_VARS, FIELD_KEYS, KEYS, dotted, spec_at
from panto.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def test_env_vars_and_field_keys_are_views_of_one_table() -> None:
    assert ENV_VARS == {k.env: k.parts for k in KEYS if k.env}
    assert FIELD_KEYS == {k.attr: k.parts for k in KEYS if k.attr}
    for k in KEYS:
        assert spec_at(k.parts) is not None, k
    assert len({k.parts for k in KEYS}) == len(KEYS)


def test_defaults_come_from_the_base_layer_only() -> None:
    """Every attribute the base layer sets has that value on a directly built
    Config, and the docs' default column agrees with the base layer."""
    base = base_layer().data
    direct = Config()
    doc = (ROOT / "docs" / "config.md").read_text()
    checked = 0
    for attr, parts in FIELD_KEYS.items():
        v = get_key(base, parts)
        if v is None:
            continue
        assert getattr(direct, attr) == v, attr
        key = dotted(*parts)
        m = re.search(rf"^\| `{re.escape(key)}` \|[^|]*\| ([^|]*) \|", doc, re.M)
        assert m, f"docs/config.md has no row for {key}"
        assert f"`{toml_value(v)}`" in m.group(1), (key, m.group(1), toml_value(v))
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[cache]\nttl = "2h"', 'cache.ttl: expected one of "5m", "1h"'),
        ("[compaction]\nthreshold = 1.5", "compaction.threshold: expected a number with 0 < x < 1"),
        ('[session]\nstore = "mysql"', "session.store: expected one of"),
        ("[timeouts]\nidle = 0", "timeouts.idle: expected a number > 0"),
        ('[models."anthropic/x"]\ncontext_window = "big"', "context_window: expected an integer"),
        ("[models.nomodel]\ncontext_window = 1", "bad name 'nomodel'"),
        ('[models."a/b"]\nwindow = 1', 'unknown key models."a/b".window'),
    ],
)
def test_new_keys_are_validated(project: Path, text: str, message: str) -> None:
    write(project / ".panto" / "config.toml", text + "\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        Config.load(env={}, cwd=project)


SECONDS = "expected a number > 0 (seconds, at most 86400: a day)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tools]\ntimeout = inf", f"tools.timeout: {SECONDS}, got the float inf"),
        ("[tools]\ntimeout = 1e10", f"tools.timeout: {SECONDS}, got the float 10000000000.0"),
        ("[tools]\ntimeout = nan", f"tools.timeout: {SECONDS}, got the float nan"),
        ("[tools.timeouts]\nbash = inf", f"tools.timeouts.bash: {SECONDS}"),
        ("[timeouts]\nread = 1e10", f"timeouts.read: {SECONDS}"),
        ("[timeouts]\nidle = inf", f"timeouts.idle: {SECONDS}"),
        (
            "[retries]\nmax_delay = inf",
            "retries.max_delay: expected a number >= 0 (seconds, at most",
        ),
        ('[mcp.servers.x]\ncommand = ["x"]\ntool_timeout = 1e10', f"tool_timeout: {SECONDS}"),
    ],
)
def test_huge_or_infinite_timeouts_are_refused(project: Path, text: str, message: str) -> None:
    """Issue 23 item 7: inf or 1e10 passed validation and crashed later
    (OverflowError in a timer) or stopped the tool watchdog."""
    write(project / ".panto" / "config.toml", text + "\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        Config.load(env={}, cwd=project)


URL = 'expected a URL starting with http:// or https:// (e.g. "https://api.example.com/v1")'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('base_url = "127.0.0.1:9/v1"', f"base_url: {URL}, got '127.0.0.1:9/v1' (no http:// or"),
        (
            '[providers.my]\nwire = "openai-chat"\nbase_url = "api.example.com/v1"',
            f"providers.my.base_url: {URL}, got 'api.example.com/v1'",
        ),
        ('base_url = "ftp://h/v1"', "(unsupported scheme ftp://)"),
        ('base_url = "https:///v1"', "(no host)"),
    ],
)
def test_a_base_url_without_a_scheme_is_a_config_error(
    tmp_path: Path, text: str, message: str
) -> None:
    """Issue 23 item 7: it was retried for seconds as a connection error."""
    write(tmp_path / "panto" / "config.toml", text + "\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        Config.load(env={"XDG_CONFIG_HOME": str(tmp_path)}, cwd=tmp_path)


def test_a_base_url_set_from_python_is_checked_before_any_request() -> None:
    """No request, no retry: the first turn raises the ConfigError."""
    from panto.app import open_agent

    config = Config(provider="openai", model="m", base_url="localhost:8080/v1", api_key="k")
    agent = open_agent(config)
    agent.submit_user_message("hi")
    with pytest.raises(ConfigError, match=re.escape(f"base_url: {URL}, got 'localhost:8080/v1'")):
        with agent.run() as stream:
            list(stream)


def test_a_day_is_still_a_valid_timeout(project: Path) -> None:
    write(project / ".panto" / "config.toml", "[tools]\ntimeout = 86400\n")
    assert Config.load(env={}, cwd=project).tool_timeout == 86400.0


def test_new_keys_load_with_origins(project: Path) -> None:
    write(
        project / ".panto" / "config.toml",
        """
        append_system_prompt = "be brief"
        [cache]
        ttl = "1h"
        [compaction]
        threshold = 0.5
        [models."anthropic/claude-x"]
        context_window = 1000
        input_price = 3
        [session]
        path = "db/s.sqlite"
        """,
    )
    c = Config.load(
        env={"PANTO_IDLE_TIMEOUT": "7", "PANTO_CACHE": "off", "PANTO_SESSION_URL": "sqlite:///x"},
        cwd=project,
    )
    assert c.append_system_prompt == "be brief"
    assert (c.cache_enabled, c.cache_ttl, c.compaction_threshold) == (False, "1h", 0.5)
    assert c.idle_timeout == 7.0 and c.origin("timeouts.idle").source == "PANTO_IDLE_TIMEOUT"
    assert c.session_url == "sqlite:///x"
    assert c.session_path == str(project / ".panto" / "db" / "s.sqlite")
    assert c.models == {"anthropic/claude-x": {"context_window": 1000, "input_price": 3.0}}
    assert c.origin('models."anthropic/claude-x".context_window').layer == "project"
    rows = {k: v for k, v, _ in c.explain({})}
    assert rows['models."anthropic/claude-x".context_window'] == "1000"
    assert rows["cache.ttl"] == '"1h"'


DEEP = 5000


@pytest.mark.parametrize(
    "text",
    [
        "a = " + "[" * DEEP + "]" * DEEP,
        "a = " + "{b = " * DEEP + "1" + "}" * DEEP,
        "[extensions.x]\n" + ".".join(["a"] * DEEP) + " = 1",
    ],
    ids=["arrays", "inline-tables", "dotted-key"],
)
def test_deep_nesting_is_one_clear_error(project: Path, text: str) -> None:
    """D11: a TOML nested 5,000 deep is a ConfigError naming the file, not a
    RecursionError, and `panto config` prints one line and exits 2."""
    f = write(project / ".panto" / "config.toml", text + "\n")
    with pytest.raises(ConfigError) as info:
        Config.load(env={}, cwd=project)
    assert str(info.value).startswith(f"{f}: ")
    assert "nested deeper than" in str(info.value)
    r = subprocess.run(
        [sys.executable, "-m", "panto", "config", "-C", str(project)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "nested deeper than" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_session_url_password_is_never_shown(project: Path) -> None:
    url = "postgresql://panto:s3cret-pw@db.example/panto"
    c = Config.load(env={"PANTO_SESSION_URL": url}, cwd=project)
    assert c.session_url == url
    rows = {k: v for k, v, _ in c.explain({})}
    assert rows["session.url"] == '"postgresql://panto:<set>@db.example/panto"'
    assert "s3cret" not in repr(c.explain({}))
    assert "url" not in c.lua_view().get("session", {})
    assert "s3cret" not in repr(c.lua_view())
    assert "s3cret" not in repr(c)

"""The pinned batteries manifest, `panto bootstrap` and `panto update`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.extensions import RockServer, needs_luarocks

from panto.cli import bootstrap as bootstrap_cli
from panto.cli import update as update_cli
from panto.errors import ConfigError
from panto.extensions import rocks
from panto.extensions.rocks import RockTree, bootstrap, load_manifest


def manifest(tmp_path: Path, body: str, lua: str = "5.4.8") -> Path:
    p = tmp_path / "batteries.toml"
    p.write_text(f'lua_version = "{lua}"\n[rocks]\n{body}\n')
    return p


def test_the_shipped_manifest_is_valid_and_empty() -> None:
    m = load_manifest()
    assert m.lua_version == rocks.LUA_VERSION
    assert dict(m.rocks) == {}
    assert Path(m.path).name == "batteries.toml"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('[rocks]\nluv = "1.51"', "exact 'version-revision'"),
        ('[rocks]\nluv = "~> 1.51-1"', "exact 'version-revision'"),
        ("[rocks]\nluv = 1", "exact 'version-revision'"),
        ('rocks = "luv"', "rocks: expected a table"),
        ("lua_version = 5.4", "lua_version: expected a string"),
        ("extra = 1", "unknown key"),
        ("rocks = [", "cannot read"),
    ],
)
def test_manifest_validation(tmp_path: Path, body: str, error: str) -> None:
    p = tmp_path / "m.toml"
    p.write_text(body + "\n")
    with pytest.raises(ConfigError, match=error) as ei:
        load_manifest(p)
    assert str(p) in str(ei.value)


def test_empty_manifest_and_no_rocks_spawn_nothing(tmp_path: Path) -> None:
    rep = bootstrap([], manifest=load_manifest(manifest(tmp_path, "")))
    assert rep.ok and rep.spawned == 0
    assert not RockTree.default().state_file.exists()


def test_lua_version_mismatch_is_reported(tmp_path: Path) -> None:
    rep = bootstrap([], manifest=load_manifest(manifest(tmp_path, 'x = "1.0-1"', lua="5.5.0")))
    assert not rep.ok and rep.lua_mismatch is not None
    assert "pins Lua 5.5.0" in rep.lua_mismatch and rep.spawned == 0


@pytest.fixture
def use_lua(monkeypatch: pytest.MonkeyPatch, lua_command: list[str] | None) -> None:
    """Make `bin/lua5.4` exec the test interpreter when `panto lua` is absent."""
    if lua_command is not None:
        monkeypatch.setattr(rocks.toolchain, "default_lua_command", lambda: list(lua_command))


@needs_luarocks
def test_bootstrap_reconciles_the_manifest(
    rock_server: RockServer, tmp_path: Path, use_lua: None
) -> None:
    srv = [str(rock_server.path)]
    tree = RockTree.default()
    said: list[str] = []

    # 1. a pin that is absent is installed, with progress
    rep = bootstrap(
        [],
        manifest=load_manifest(manifest(tmp_path, 'greet = "1.0-1"')),
        servers=srv,
        progress=said.append,
    )
    assert rep.ok, rep.batteries.messages()
    assert [(r.name, r.action, r.version) for r in rep.batteries.results] == [
        ("greet", "installed", "1.0-1")
    ]
    assert any("installing greet 1.0-1" in s for s in said)
    assert json.loads(tree.state_file.read_text()) == {"installed": {"greet": "1.0-1"}}

    # 2. nothing to do: no luarocks
    rep = bootstrap([], manifest=load_manifest(manifest(tmp_path, 'greet = "1.0-1"')), servers=srv)
    assert rep.ok and rep.spawned == 0

    # 3. a bumped pin replaces the old version
    rep = bootstrap([], manifest=load_manifest(manifest(tmp_path, 'greet = "1.1-1"')), servers=srv)
    assert rep.ok and tree.installed_versions("greet") == ["1.1-1"]
    assert json.loads(tree.state_file.read_text()) == {"installed": {"greet": "1.1-1"}}

    # 4. dropped from the manifest: bootstrap removes what it installed
    rep = bootstrap([], manifest=load_manifest(manifest(tmp_path, "")), servers=srv)
    assert rep.ok, [r.message for r in rep.removed]
    assert [(r.name, r.action, r.version) for r in rep.removed] == [("greet", "removed", "1.1-1")]
    assert tree.installed_versions("greet") == []
    assert json.loads(tree.state_file.read_text()) == {"installed": {}}


@needs_luarocks
def test_bootstrap_keeps_a_dropped_battery_that_extensions_rocks_wants(
    rock_server: RockServer, tmp_path: Path, use_lua: None
) -> None:
    srv = [str(rock_server.path)]
    tree = RockTree.default()
    assert bootstrap(
        [], manifest=load_manifest(manifest(tmp_path, 'greet = "1.0-2"')), servers=srv
    ).ok
    rep = bootstrap(["greet ~> 1.0"], manifest=load_manifest(manifest(tmp_path, "")), servers=srv)
    assert rep.ok and rep.removed == [] and rep.spawned == 0
    assert tree.installed_versions("greet") == ["1.0-2"]
    assert json.loads(tree.state_file.read_text()) == {"installed": {}}  # no longer bootstrap's


@needs_luarocks
def test_bootstrap_cli(
    rock_server: RockServer,
    tmp_path: Path,
    use_lua: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    m = manifest(tmp_path, 'greet = "1.0-1"')
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[extensions]\nrocks = ["cmod ~> 0.1"]\nrock_servers = ["{rock_server.path}"]\n'
    )
    rc = bootstrap_cli.main(["--manifest", str(m), "--config", str(cfg)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "toolchain:" in out and "luarocks" in out and "Lua headers" in out
    assert "installing greet 1.0-1" in out and "installing cmod 0.1-1" in out
    assert "bootstrap: ok" in out
    # again: a fast no-op
    rc = bootstrap_cli.main(["--manifest", str(m), "--config", str(cfg), "-q"])
    assert rc == 0 and capsys.readouterr().out == ""


@needs_luarocks
def test_update_cli_reinstalls_and_fails_clearly(
    rock_server: RockServer,
    tmp_path: Path,
    use_lua: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    srv = ["--server", str(rock_server.path)]
    assert update_cli.main([*srv, "--rock", "greet 1.0-1"]) == 0
    assert update_cli.main([*srv, "--rock", "greet 1.0-1"]) == 0
    out = capsys.readouterr().out
    assert out.count("installing greet 1.0-1") == 2 and "reinstalled greet 1.0-1" in out
    rc = update_cli.main([*srv, "--rock", "greet 1.0-1", "--rock", "nosuch 1.0"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "error: no rock matches 'nosuch 1.0'" in out


def test_update_cli_without_rocks(capsys: pytest.CaptureFixture[str]) -> None:
    assert update_cli.main([]) == 0
    assert "no rocks configured" in capsys.readouterr().out


def test_cli_config_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "config.toml"
    bad.write_text('[extensions]\nrocks = "greet"\n')
    assert update_cli.main(["--config", str(bad)]) == 2
    # --config files are checked by the config schema, as every config layer is
    err = capsys.readouterr().err
    assert f"{bad}: extensions.rocks: expected an array of luarocks dependency strings" in err
    assert bootstrap_cli.main(["--config", str(tmp_path / "missing.toml")]) == 2
    assert "missing.toml: no such file" in capsys.readouterr().err

"""The layered config reaches extension loading: policy, paths, rocks."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.config import ext, fake_rock, luarocks_shim, write

from panto.config import Config  # noqa: E402
from panto.lua import LuaRuntime, create_source, load_extensions  # noqa: E402


@pytest.fixture
def rt() -> Iterator[LuaRuntime]:
    r = LuaRuntime()
    yield r
    r.close()


def _probe(rt: LuaRuntime, table: str, key: str) -> object:
    return rt.eval(f'(_G.{table} or {{}})["{key}"]')


def test_denied_entry_is_evaluated_but_not_activated(
    rt: LuaRuntime, user_dir: Path, project: Path
) -> None:
    write(user_dir / "extensions" / "a.lua", ext("me.denied", tool="denied_tool"))
    write(user_dir / "extensions" / "b.lua", ext("me.carved", tool="carved_tool"))
    write(user_dir / "config.toml", '[extensions]\ndeny = ["me.*"]\n')
    write(project / ".panto" / "config.toml", '[extensions]\nallow = ["me.carved"]\n')
    cfg = Config.load(cwd=project)
    report = load_extensions(rt, cwd=project, config=cfg)
    assert not report.errors, report.errors
    # pass one ran both sources; pass two activated only the permitted one
    assert _probe(rt, "EVALS", "me.denied") == 1 and _probe(rt, "EVALS", "me.carved") == 1
    assert _probe(rt, "ACTIVATED", "me.denied") is None
    assert _probe(rt, "ACTIVATED", "me.carved") is True
    assert "denied_tool" not in rt.tools and "carved_tool" in rt.tools
    d = report.entries["me.denied"]
    assert d.status == "denied" and not d.active and d.reason == 'deny "me.*" (user)'
    assert report.denied == ["me.denied"]
    c = report.entries["me.carved"]
    assert c.active and c.reason == 'allow "me.carved" (project)'
    # the std tools: default allow
    assert report.entries["std.read"].reason == "default allow"


def test_cli_deny_on_top_and_whitelist(rt: LuaRuntime, user_dir: Path, project: Path) -> None:
    write(
        user_dir / "config.toml", '[extensions]\ndeny = ["**"]\nallow = ["std.read", "std.edit"]\n'
    )
    report = load_extensions(rt, cwd=project, config=Config.load(cwd=project), deny=["std.edit"])
    assert sorted(report.active) == ["std.read"]
    assert report.entries["std.edit"].reason == 'deny "std.edit" (cli)'
    assert report.entries["std.bash"].reason == 'deny "**" (user)'


def test_paths_precedence(rt: LuaRuntime, user_dir: Path, project: Path, tmp_path: Path) -> None:
    # user layer: dir beats paths; project paths beat user dir; relative paths vs cwd
    write(user_dir / "extensions" / "x.lua", ext("dup.a", probe="user-dir-a"))
    write(tmp_path / "upaths" / "x.lua", ext("dup.a", probe="user-paths-a"))
    write(tmp_path / "upaths" / "y.lua", ext("dup.b", probe="user-paths-b"))
    write(user_dir / "extensions" / "z.lua", ext("dup.c", probe="user-dir-c"))
    write(user_dir / "config.toml", f'[extensions]\npaths = ["{tmp_path / "upaths"}"]\n')
    write(project / "dev" / "c.lua", ext("dup.c", probe="project-paths-c"))
    write(project / "dev" / "read.lua", ext("std.read", probe="project-read"))
    write(project / ".panto" / "config.toml", '[extensions]\npaths = ["dev"]\n')
    cwd = project  # "dev" resolves against the working directory
    report = load_extensions(rt, cwd=cwd, config=Config.load(cwd=cwd))
    assert not report.errors, report.errors
    a = report.entries["dup.a"]
    assert a.source.layer == "user" and a.source.kind == "dir"
    assert a.shadowed == [tmp_path / "upaths" / "x.lua"]
    assert report.entries["dup.b"].source.kind == "paths"
    c = report.entries["dup.c"]
    assert (c.source.layer, c.source.kind) == ("project", "paths")
    assert report.entries["std.read"].source.path == project / "dev" / "read.lua"
    for probe in ("user-dir-a", "user-paths-b", "project-paths-c", "project-read"):
        assert _probe(rt, "ACTIVATED", probe) is True, probe
    for probe in ("user-paths-a", "user-dir-c"):
        assert _probe(rt, "EVALS", probe) == 1 and _probe(rt, "ACTIVATED", probe) is None
    assert "read" not in rt.tools  # the project copy registered nothing
    # the same project dir from a subdirectory: "dev" is now relative to it
    sub = project / "sub"
    sub.mkdir()
    rt2 = LuaRuntime()
    try:
        r2 = load_extensions(rt2, cwd=sub, config=Config.load(cwd=sub))
        assert r2.entries["std.read"].source.layer == "base"
    finally:
        rt2.close()


def test_same_name_twice_in_one_source_is_an_error(
    rt: LuaRuntime, user_dir: Path, project: Path
) -> None:
    write(project / ".panto" / "extensions" / "a.lua", ext("p.same", probe="one"))
    write(project / ".panto" / "tools" / "b.lua", ext("p.same", probe="two"))
    report = load_extensions(rt, cwd=project, config=Config.load(cwd=project))
    errs = [e for e in report.errors if "p.same" in e]
    assert len(errs) == 1 and "a.lua" in errs[0] and "b.lua" in errs[0]
    assert _probe(rt, "ACTIVATED", "one") is None and _probe(rt, "ACTIVATED", "two") is None


def test_entry_settings_and_lua_view(user_dir: Path, project: Path) -> None:
    write(user_dir / "extensions" / "g.lua", ext("me.greet", tool="greet"))
    write(
        user_dir / "config.toml",
        '[providers.openai]\napi_key = "sk-hidden"\n'
        '[extensions."me.greet"]\ngreeting = "hello"\n'
        "[tools]\ntimeout = 7\n[tools.timeouts]\ngreet = 3\n",
    )
    rt = LuaRuntime()
    try:
        cfg = Config.load(cwd=project)
        src, report = create_source(cwd=str(project), config=cfg, runtime=rt)
        assert rt.eval('_G.ACTIVATED["me.greet"]') == "hello"
        assert rt.eval("panto.config.tools.timeout") == 7
        assert rt.eval("panto.config.providers") is None
        assert src._timeout("greet") == 3 and src._timeout("read") == 7
    finally:
        rt.close()


def test_config_object_gives_view_settings_and_timeouts(user_dir: Path, project: Path) -> None:
    """``create_source(config)`` uses the Config object as is (the old
    plain-mapping form is gone): the Lua view, per-entry settings, the
    policy and the tool timeout all come from it."""
    write(user_dir / "extensions" / "g.lua", ext("me.greet"))
    write(
        user_dir / "config.toml",
        '[extensions]\ndeny = ["std.bash"]\n[extensions."me.greet"]\ngreeting = "yo"\n'
        "[tools]\ntimeout = 4\n",
    )
    cfg = Config.load(cwd=project, model="mock/m")
    rt = LuaRuntime()
    try:
        src, report = create_source(cfg, cwd=str(project), runtime=rt)
        assert rt.eval('_G.ACTIVATED["me.greet"]') == "yo"
        assert rt.eval("panto.config.model") == cfg.model_spec == "mock/m"
        assert "bash" not in rt.tools and "read" in rt.tools
        assert src._timeout("read") == 4
    finally:
        rt.close()


def test_no_extensions_keeps_policy(rt: LuaRuntime, user_dir: Path, project: Path) -> None:
    write(user_dir / "extensions" / "g.lua", ext("me.greet"))
    write(
        user_dir / "config.toml", '[extensions]\ndeny = ["std.bash"]\nrocks = ["nothere 1.0-1"]\n'
    )
    report = load_extensions(rt, cwd=project, config=Config.load(cwd=project), no_extensions=True)
    assert sorted(report.active) == [
        "std.edit",
        "std.find",
        "std.grep",
        "std.ls",
        "std.read",
        "std.write",
    ]
    assert report.rocks is None and not report.warnings


# --------------------------------------------------------------------------
# rocks at start-up

ROCK = """\
return {
  { name = "rocky.one", activate = function() _G.ROCKY = (_G.ROCKY or 0) + 1 end },
  { name = "rocky.two", activate = function() _G.ROCKY2 = true end },
}
"""


def test_installed_rocks_spawn_no_luarocks(
    rt: LuaRuntime,
    user_dir: Path,
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_rock(Path(os.environ["XDG_DATA_HOME"]), "rocky", "1.2-1", ROCK)
    log = tmp_path / "luarocks.log"
    shim = luarocks_shim(tmp_path / "shim", log)
    monkeypatch.setenv("PANTO_LUAROCKS", str(shim))  # panto's luarocks otherwise
    write(user_dir / "config.toml", '[extensions]\nrocks = ["rocky ~> 1"]\n')
    # a user paths copy of rocky.two shadows the rock's (rocks < paths)
    write(tmp_path / "dev" / "two.lua", ext("rocky.two", probe="dev-two"))
    write(
        project / ".panto" / "config.toml",
        f'[extensions]\nrocks = ["rocky 1.2-1"]\npaths = ["{tmp_path / "dev"}"]\n',
    )
    report = load_extensions(rt, cwd=project, config=Config.load(cwd=project))
    assert not report.errors and not report.warnings, (report.errors, report.warnings)
    assert not log.exists(), log.read_text()  # nothing missing: luarocks never ran
    assert report.rocks is None
    one = report.entries["rocky.one"]
    assert one.active and (one.source.layer, one.source.kind) == ("project", "rocks")
    assert rt.eval("_G.ROCKY") == 1  # activated once, from the highest source
    two = report.entries["rocky.two"]
    assert (two.source.layer, two.source.kind) == ("project", "paths")
    assert rt.eval("_G.ROCKY2") is None and _probe(rt, "ACTIVATED", "dev-two") is True
    assert "rock:rocky 1.2-1" in report.format()


def test_missing_rock_runs_luarocks_and_panto_carries_on(
    rt: LuaRuntime, user_dir: Path, project: Path, tmp_path: Path, monkeypatch
) -> None:
    log = tmp_path / "luarocks.log"
    shim = luarocks_shim(tmp_path / "shim", log)
    monkeypatch.setenv("PANTO_LUAROCKS", str(shim))
    write(user_dir / "config.toml", '[extensions]\nrocks = ["absent 1.0-1"]\n')
    report = load_extensions(rt, cwd=project, config=Config.load(cwd=project))
    assert log.exists() and log.read_text().strip()  # it tried
    assert report.warnings and "absent" in report.warnings[0]
    assert "std.read" in report.active and not report.errors
    # listing (panto extensions) never installs
    log.unlink()
    rt2 = LuaRuntime()
    try:
        r2 = load_extensions(rt2, cwd=project, config=Config.load(cwd=project), sync_rocks=False)
        assert not log.exists()
        assert "not installed" in r2.warnings[0] and "panto bootstrap" in r2.warnings[0]
    finally:
        rt2.close()


def test_nested_under_luarocks_never_installs(
    rt: LuaRuntime, user_dir: Path, project: Path, tmp_path: Path, monkeypatch
) -> None:
    log = tmp_path / "luarocks.log"
    shim = luarocks_shim(tmp_path / "shim", log)
    monkeypatch.setenv("PANTO_LUAROCKS", str(shim))
    monkeypatch.setenv("PANTO_ROCKS_NESTED", "1")
    write(user_dir / "config.toml", '[extensions]\nrocks = ["absent 1.0-1"]\n')
    report = load_extensions(rt, cwd=project, config=Config.load(cwd=project))
    assert not log.exists()
    assert report.warnings and "not installing from inside luarocks" in report.warnings[0]


# --------------------------------------------------------------------------
# panto extensions


def test_panto_extensions_lists_entries_with_rules(
    user_dir: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from panto.cli import extensions as cli_ext

    write(user_dir / "extensions" / "a.lua", ext("me.denied"))
    write(project / ".panto" / "tools" / "read.lua", ext("std.read", probe="p-read"))
    write(user_dir / "config.toml", '[extensions]\ndeny = ["me.*"]\n')
    rc = cli_ext.main(["-C", str(project)])
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    rows = {}
    for line in out.splitlines()[1:]:
        cols = line.split()
        rows.setdefault(cols[0], []).append(line)
    assert out.splitlines()[0].split() == ["NAME", "STATUS", "SOURCE", "LOCATION", "DECIDED", "BY"]
    (denied,) = rows["me.denied"]
    assert " denied " in denied and "user dir" in denied and denied.endswith('deny "me.*" (user)')
    active, shadowed = rows["std.read"]
    assert " active " in active and "project dir" in active and active.endswith("default allow")
    assert " shadowed " in shadowed and "shadowed by project dir" in shadowed
    assert any(" active " in r and r.endswith("default allow") for r in rows["std.bash"])
    # --deny on top
    rc = cli_ext.main(["-C", str(project), "--deny", "std.bash"])
    out, _ = capsys.readouterr()
    assert 'deny "std.bash" (cli)' in out


def test_panto_extensions_reports_config_errors(
    user_dir: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from panto.cli import extensions as cli_ext

    f = write(user_dir / "config.toml", '[extensions]\ndeny = "std.bash"\n')
    with pytest.raises(SystemExit) as exit_:
        cli_ext.main(["-C", str(project)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"{f}: extensions.deny: expected an array of dotted globs" in err


# --------------------------------------------------------------------------
# bootstrap / update read the effective config


def test_update_and_bootstrap_use_the_layered_config(
    user_dir: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from panto.cli import bootstrap as cli_boot
    from panto.cli import update as cli_update
    from panto.extensions import rocks

    write(
        user_dir / "config.toml",
        '[extensions]\nrocks = ["a 1.0-1"]\nrock_servers = ["mirror"]\n',
    )
    write(project / ".panto" / "config.toml", '[extensions]\nrocks = ["b ~> 2", "a 1.0-1"]\n')
    seen: dict[str, object] = {}

    def fake_update(specs, **kw):  # type: ignore[no-untyped-def]
        seen["update"] = (list(specs), list(kw["servers"]))
        return rocks.SyncReport([])

    class Stop(Exception):
        pass

    def fake_bootstrap(specs, **kw):  # type: ignore[no-untyped-def]
        seen["bootstrap"] = (list(specs), list(kw["servers"]))
        raise Stop

    monkeypatch.setattr(rocks, "update", fake_update)
    monkeypatch.setattr(rocks, "bootstrap", fake_bootstrap)
    monkeypatch.chdir(project)
    assert cli_update.main(["-q"]) == 0
    assert seen["update"] == (["a 1.0-1", "b ~> 2"], [str(user_dir / "mirror")])
    assert cli_update.main(["-q", "--rock", "c", "--server", "/srv"]) == 0
    assert seen["update"] == (["c"], ["/srv"])
    with pytest.raises(Stop):
        cli_boot.main(["-q"])
    assert seen["bootstrap"] == (["a 1.0-1", "b ~> 2"], [str(user_dir / "mirror")])

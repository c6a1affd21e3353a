"""Issue 12 D14: an extension tool named like an already-registered tool
(e.g. ``bash``) never silently replaces it: the activation fails with an
error naming both entries and their sources; ``panto extensions`` shows it.
Replacing a built-in is done by shadowing its entry (same entry name)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from panto.lua import LuaRuntime, LuaToolSource, load_extensions
from panto.lua.loader import Source, discover_sources
from panto.tools import ToolCall

FAKE_BASH = """
return {
  name = "my.bash",
  activate = function()
    panto.ext.register_tool{name = "mine", handler = function() return "mine" end}
    panto.ext.register_tool{name = "bash", handler = function() return "fake" end}
  end,
}
"""


def test_clash_is_a_load_error_naming_both(tmp_path: Path) -> None:
    (tmp_path / "fake.lua").write_text(FAKE_BASH)
    sources = [
        *discover_sources(no_extensions=True),
        Source(tmp_path / "fake.lua", "user", tmp_path),
    ]
    with LuaRuntime() as rt:
        report = load_extensions(rt, sources=sources)
        assert len(report.errors) == 1, report.errors
        err = report.errors[0]
        assert "my.bash" in err and str(tmp_path / "fake.lua") in err
        assert "std.bash" in err and "bash.lua" in err
        assert not report.entries["my.bash"].active
        # the built-in is untouched, and the failed entry left nothing behind
        names = [d.name for d in rt.decls()]
        assert "bash" in names and "mine" not in names
        out = LuaToolSource(rt).invoke_batch([ToolCall("c", "bash", {"command": "echo real"})])
        assert out[0].content.strip() == "real"
        assert "my.bash" in report.format()


def test_shadowing_the_entry_replaces_the_builtin(tmp_path: Path) -> None:
    (tmp_path / "bash.lua").write_text(FAKE_BASH.replace("my.bash", "std.bash"))
    sources = [
        *discover_sources(no_extensions=True),
        Source(tmp_path / "bash.lua", "user", tmp_path),
    ]
    with LuaRuntime() as rt:
        report = load_extensions(rt, sources=sources)
        assert not report.errors, report.errors
        assert report.entries["std.bash"].shadowed  # shown by `panto extensions`
        out = LuaToolSource(rt).invoke_batch([ToolCall("c", "bash", {"command": "echo real"})])
        assert out[0].content == "fake"


def test_panto_extensions_shows_the_clash(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ext = home / ".config" / "panto" / "extensions"
    ext.mkdir(parents=True)
    (ext / "fake.lua").write_text(FAKE_BASH)
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    r = subprocess.run(
        [sys.executable, "-m", "panto", "extensions"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "my.bash" in r.stdout and "std.bash" in r.stdout and "clashes" in r.stdout

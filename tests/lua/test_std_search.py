"""Issue 13: std.grep (ripgrep or grep), std.find (glob), std.ls, and the
unified diff std.edit returns."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.lua_caller import Caller

from panto.lua import LuaToolSource
from panto.tools import ToolCall


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "a.py").write_text("def alpha():\n    return 1\n")
    (tmp_path / "src" / "b.py").write_text("ALPHA = 2\nbeta = 3\n")
    (tmp_path / "notes.md").write_text("alpha notes\n")
    (tmp_path / ".hidden").write_text("alpha hidden\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "x.py").write_text("alpha\n")
    return tmp_path


def test_grep_finds_lines(call: Caller, tree: Path) -> None:
    out = call("grep", pattern="alpha", path=str(tree / "src"))
    assert not out.is_error, out.content
    assert out.content.splitlines() == [f"{tree}/src/pkg/a.py:1:def alpha():"]
    out = call("grep", pattern="alpha", path=str(tree / "src"), ignore_case=True, glob="b.py")
    assert out.content.splitlines() == [f"{tree}/src/b.py:1:ALPHA = 2"]
    assert call("grep", pattern="nothing-here", path=str(tree)).content == "No matches."


def test_grep_limit_and_errors(call: Caller, tree: Path) -> None:
    (tree / "many.txt").write_text("".join(f"hit {i}\n" for i in range(50)))
    out = call("grep", pattern="hit", path=str(tree / "many.txt"), limit=5)
    assert len([x for x in out.content.splitlines() if x.startswith("1") or ":" in x]) >= 5
    assert "showing 5 of 50" in out.content
    out = call("grep", pattern="(", path=str(tree))
    assert out.is_error and "failed" in out.content
    assert call("grep", path=str(tree)).is_error


def test_grep_without_ripgrep(call: Caller, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback (grep -E) when rg is not on PATH."""
    if shutil.which("grep") is None:  # pragma: no cover
        pytest.skip("no grep on this machine")
    bindir = tree.parent / "bin"
    bindir.mkdir()
    os.symlink(shutil.which("grep"), bindir / "grep")  # type: ignore[arg-type]
    monkeypatch.setenv("PATH", str(bindir))
    out = call("grep", pattern="alph[a]", path=str(tree / "src"))
    assert out.content.splitlines() == [f"{tree}/src/pkg/a.py:1:def alpha():"], out.content


def test_find(call: Caller, tree: Path) -> None:
    out = call("find", pattern="**/*.py", path=str(tree))
    assert not out.is_error, out.content
    assert out.content.splitlines() == [f"{tree}/src/b.py", f"{tree}/src/pkg/a.py"]
    out = call("find", pattern="node_modules/*.py", path=str(tree))
    assert out.content.splitlines() == [f"{tree}/node_modules/x.py"]
    assert call("find", pattern="*", path=str(tree), hidden=True, limit=2).content.endswith(
        "[showing 2 of 3 paths; narrow the pattern or raise limit]"
    )
    assert call("find", pattern="*.rs", path=str(tree)).content.startswith("No files match")
    assert call("find", pattern="*", path=str(tree / "nope")).is_error


def test_ls(call: Caller, tree: Path) -> None:
    out = call("ls", path=str(tree))
    assert out.content.splitlines() == ["node_modules/", "src/", "notes.md\t12"]
    assert ".hidden\t13" in call("ls", path=str(tree), all=True).content
    assert call("ls", path=str(tree / "nope")).is_error


def test_edit_returns_a_unified_diff(call: Caller, tmp_path: Path) -> None:
    f = tmp_path / "f.py"
    f.write_text("a = 1\nb = 2\nc = 3\n")
    out = call("edit", path=str(f), old_string="b = 2", new_string="b = 20\nb2 = 21")
    assert not out.is_error
    first, *diff = out.content.splitlines()
    assert first == f"Edited {f}: replaced 1 occurrence."
    assert diff == [
        f"--- a/{f}",
        f"+++ b/{f}",
        "@@ -1,3 +1,4 @@",
        " a = 1",
        "-b = 2",
        "+b = 20",
        "+b2 = 21",
        " c = 3",
    ]


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def test_read_returns_an_image(call: Caller, tmp_path: Path) -> None:
    import base64

    from panto.conversation import Image

    f = tmp_path / "dot.PNG"
    f.write_bytes(PNG)
    out = call("read", path=str(f))
    assert not out.is_error, out.content
    assert out.content == f"Image file {f} (image/png, {len(PNG)} bytes), attached."
    assert out.images == (Image("image/png", base64.b64encode(PNG).decode()),)
    # text files carry no images
    (tmp_path / "t.txt").write_text("x\n")
    assert call("read", path=str(tmp_path / "t.txt")).images == ()


def test_tool_result_with_images_from_lua(runtime: object) -> None:
    from panto.lua import LuaRuntime, LuaToolSource
    from panto.tools import ToolCall

    assert isinstance(runtime, LuaRuntime)
    runtime.execute(
        'panto.ext.register_tool{name = "snap", handler = function()\n'
        '  return panto.tool_result{content = "two", is_error = true, images = {\n'
        '    {media_type = "image/gif", data = "GIF89a\\0\\1"},\n'
        '    {media_type = "image/png", data = ""}}}\n'
        "end}"
    )
    out = LuaToolSource(runtime).invoke_batch([ToolCall("c", "snap", {})])[0]
    assert out.content == "two" and out.is_error
    assert [(i.media_type, i.data_b64) for i in out.images] == [
        ("image/gif", "R0lGODlhAAE="),
        ("image/png", ""),
    ]


def _without_ripgrep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *tools: str) -> None:
    """PATH holds only ``tools`` (rg hidden even when installed)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for t in tools:
        found = shutil.which(t)
        if found is None:  # pragma: no cover
            pytest.skip(f"no {t} on this machine")
        os.symlink(found, bindir / t)
    monkeypatch.setenv("PATH", str(bindir))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a .venv/, a build folder and other ignored files,
    an untracked file and a tracked one."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("needle = 1\n")
    (root / ".gitignore").write_text(".venv/\nbuild/\n*.log\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "src/app.py", ".gitignore"], check=True)
    (root / "notes.txt").write_text("needle in an untracked file\n")  # untracked, not ignored
    for ignored in (".venv/lib/site.py", "build/out.py", "run.log"):
        (root / ignored).parent.mkdir(parents=True, exist_ok=True)
        (root / ignored).write_text("needle ignored\n")
    return root


def test_grep_without_ripgrep_respects_gitignore(
    call: Caller, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without rg, inside a repository: git grep (tracked and untracked files,
    nothing .gitignore names), paths shown as grep would."""
    _without_ripgrep(tmp_path, monkeypatch, "git", "grep")
    out = call("grep", pattern="needle", path=str(repo))
    assert not out.is_error, out.content
    assert sorted(out.content.splitlines()) == [
        f"{repo}/notes.txt:1:needle in an untracked file",
        f"{repo}/src/app.py:1:needle = 1",
    ]
    out = call("grep", pattern="NEEDLE", path=str(repo), glob="*.py", ignore_case=True)
    assert out.content.splitlines() == [f"{repo}/src/app.py:1:needle = 1"]
    out = call("grep", pattern="needle", path=str(repo / "src" / "app.py"))
    assert out.content.splitlines() == [f"{repo}/src/app.py:1:needle = 1"]
    # asked for on purpose, an ignored folder is searched
    out = call("grep", pattern="needle", path=str(repo / ".venv"))
    assert out.content.splitlines() == [f"{repo}/.venv/lib/site.py:1:needle ignored"]
    assert call("grep", pattern="(", path=str(repo)).is_error
    assert call("grep", pattern="nothing-here", path=str(repo)).content == "No matches."


def test_grep_without_ripgrep_relative_path(
    source: LuaToolSource, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _without_ripgrep(tmp_path, monkeypatch, "git", "grep")
    src = LuaToolSource(source.runtime, cwd=str(repo))
    out = src.invoke_batch([ToolCall("c", "grep", {"pattern": "needle", "context": 1})])[0]
    assert sorted(x for x in out.content.splitlines() if x != "--") == [
        "notes.txt:1:needle in an untracked file",
        "src/app.py:1:needle = 1",
    ]
    out = src.invoke_batch([ToolCall("c", "grep", {"pattern": "needle", "path": "src"})])[0]
    assert out.content.splitlines() == ["src/app.py:1:needle = 1"]


def test_grep_outside_a_repository_skips_what_find_skips(
    call: Caller, tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without rg and outside a repository: grep -r with std.find's skip list."""
    _without_ripgrep(tmp_path, monkeypatch, "git", "grep")
    for d in (".venv", "__pycache__", ".git"):
        (tree / d).mkdir(exist_ok=True)
        (tree / d / "x.py").write_text("alpha skipped\n")
    out = call("grep", pattern="alpha", path=str(tree))
    assert sorted(out.content.splitlines()) == [
        f"{tree}/.hidden:1:alpha hidden",
        f"{tree}/notes.md:1:alpha notes",
        f"{tree}/src/pkg/a.py:1:def alpha():",
    ]

"""The layering rules of ``docs/architecture.md``, computed from the source.

- No import cycle among panto's Python modules, counting the imports inside
  functions (the lazy ones) but not those under ``if TYPE_CHECKING:``, which
  never run.
- No ``from .x import _private`` across modules: a leading underscore means
  "this module's own business".
- ``ruff check --select SLF001`` (an object's private attribute used from
  outside its class) is clean.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PKG_ROOT = Path(__file__).resolve().parent.parent / "python"
PKG = PKG_ROOT / "panto"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST):
    """Every Import/ImportFrom node that can run (skips ``if TYPE_CHECKING``)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                stack.extend(child.orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            stack.append(child)


def _resolve(mod: str, path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    base = package.split(".")
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = _modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    private: list[str] = []
    for mod, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _runtime_imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve(mod, path, node)
                targets = []
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if sub in modules:  # `from . import module`
                        targets.append(sub)
                    else:
                        targets.append(base)
                        if alias.name.startswith("_") and not alias.name.startswith("__"):
                            private.append(
                                f"{path.relative_to(PKG_ROOT)}:{node.lineno}: "
                                f"from {base} import {alias.name}"
                            )
            for target in targets:
                if target in modules and target != mod:
                    edges[mod].add(target)
    return edges, private


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    # deep import chains recurse; the limit goes back afterwards (a raised
    # limit leaks into later tests: the TOML depth test counts on the default)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10_000))
    try:
        for v in sorted(edges):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(old)
    return found


def test_the_graph_sees_lazy_imports_and_skips_type_checking() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .a import A\n"
        "def f():\n    from .b import B\n"
    )
    names = [n.module for n in _runtime_imports(tree) if isinstance(n, ast.ImportFrom)]
    assert names == ["typing", "b"] or sorted(names) == ["b", "typing"]


def test_cycle_detection_finds_a_two_module_loop() -> None:
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_among_panto_modules() -> None:
    edges, _ = _graph()
    assert len(edges) > 30  # the scan found the package
    assert _cycles(edges) == []


def test_no_private_names_imported_across_modules() -> None:
    _, private = _graph()
    assert private == []


def test_no_private_member_access_across_objects() -> None:
    ruff = Path(sys.executable).with_name("ruff")
    exe = str(ruff) if ruff.exists() else shutil.which("ruff")
    if exe is None:
        pytest.fail("ruff is not installed: `pip install '.[test]'` provides it")
    proc = subprocess.run(
        [exe, "check", "--select", "SLF001", "--output-format", "concise", str(PKG)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

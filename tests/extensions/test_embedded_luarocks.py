"""luarocks shipped inside panto: no system luarocks, lua or C compiler on
PATH, ``LUAROCKS_*`` unset.  A local rock server is made with the shipped
luarocks (``panto rocks pack`` + ``panto rocks admin make-manifest``),
``panto rocks install`` installs a pure-Lua rock from it, and an extension
that requires the rock loads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest
from support.extensions import RockServer, needs_luarocks, path_without

from panto.extensions.rocks.toolchain import LUAROCKS_DIR, SHIPPED_HEADERS

pytestmark = needs_luarocks

HIDDEN = ("luarocks", "lua", "gcc", "cc", "clang", "tcc", "make")


@pytest.fixture
def bare_env(tmp_path: Path, isolated_home: Path) -> dict[str, str]:
    """The test's home, a PATH without luarocks, lua or a C compiler, and no
    ``LUAROCKS_*`` or ``PANTO_*`` variables."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LUAROCKS", "PANTO_", "LUA_")) and k != "CC"
    }
    env["PATH"] = path_without(HIDDEN, tmp_path / "bare-bin")
    for name in ("luarocks", "luarocks-admin", "lua", "lua5.4", "gcc", "cc"):
        assert shutil.which(name, path=env["PATH"]) is None, name
    return env


def panto(env: dict[str, str], *args: str, cwd: Path | None = None) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "panto", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )
    assert r.returncode == 0, f"panto {' '.join(args)} -> {r.returncode}\n{r.stdout}{r.stderr}"
    return r.stdout


def test_panto_rocks_install_from_a_local_server_and_an_extension_uses_it(
    tmp_path: Path, bare_env: dict[str, str], isolated_home: Path
) -> None:
    # a tiny pure-Lua rock: its sources as a .tar.gz, its rockspec
    src = tmp_path / "hello-0.3"
    src.mkdir()
    (src / "hello.lua").write_text('return { word = function() return "from-rock" end }\n')
    tgz = tmp_path / "hello-0.3.tar.gz"
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(src, arcname=src.name)
    spec = tmp_path / "hello-0.3-1.rockspec"
    spec.write_text(
        textwrap.dedent(
            f"""\
            package = "hello"
            version = "0.3-1"
            source = {{ url = "file://{tgz}", dir = "hello-0.3" }}
            description = {{ summary = "a pure-Lua test rock" }}
            dependencies = {{ "lua >= 5.1" }}
            build = {{ type = "builtin", modules = {{ hello = "hello.lua" }} }}
            """
        )
    )
    # the rock server, made with the shipped luarocks
    server = tmp_path / "server"
    server.mkdir()
    out = panto(bare_env, "rocks", "pack", str(spec), cwd=server)
    assert (server / "hello-0.3-1.src.rock").is_file(), out
    panto(bare_env, "rocks", "admin", "make-manifest", str(server))
    assert "hello" in (server / "manifest-5.4").read_text()

    out = panto(bare_env, "rocks", "install", "hello", "0.3-1", "--only-server", str(server))
    assert "hello 0.3-1 is now installed" in out
    tree = isolated_home / "xdg_data_home" / "panto" / "rocks" / "lua-5.4.8"
    assert (tree / "share" / "lua" / "5.4" / "hello.lua").is_file()
    assert "hello\t0.3-1\tinstalled" in panto(bare_env, "rocks", "list", "--porcelain")

    # an extension that requires the rock loads (its name comes from the rock)
    exts = isolated_home / "xdg_config_home" / "panto" / "extensions"
    exts.mkdir(parents=True)
    (exts / "uses_hello.lua").write_text(
        'local hello = require("hello")\n'
        'return { name = "uses." .. hello.word(), activate = function() end }\n'
    )
    listing = panto(bare_env, "extensions")
    line = next(ln for ln in listing.splitlines() if ln.startswith("uses.from-rock"))
    assert " active " in line and "uses_hello.lua" in line

    # extensions.rocks names it: present, so a start installs nothing
    (isolated_home / "xdg_config_home" / "panto" / "config.toml").write_text(
        '[extensions]\nrocks = ["hello 0.3-1"]\n'
    )
    out = panto(bare_env, "bootstrap", "--server", str(server))
    assert "present     hello 0.3-1" in out and "bootstrap: ok" in out
    assert "shipped with panto" in out and "(3.8.0)" in out


def test_panto_rocks_help_and_a_missing_override(tmp_path: Path, bare_env: dict[str, str]) -> None:
    out = panto(bare_env, "rocks", "--help")
    assert "panto rocks admin" in out and "--only-server DIR" in out
    assert "panto rocks 3.8.0" in panto(bare_env, "rocks", "--version")
    env = {**bare_env, "PANTO_LUAROCKS": str(tmp_path / "nope")}
    r = subprocess.run(
        [sys.executable, "-m", "panto", "rocks", "list"], capture_output=True, text=True, env=env
    )
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == (
        "panto rocks: luarocks not found: $PANTO_LUAROCKS names no executable "
        "(unset it to use the luarocks shipped with panto)\n"
    )


def test_the_shipped_sources_carry_their_licences() -> None:
    assert "Permission is hereby granted" in (LUAROCKS_DIR / "LICENSE").read_text()
    readme = (LUAROCKS_DIR.parent / "README.md").read_text()
    assert "LuaRocks 3.8.0" in readme and "luarocks_3.8.0+dfsg1-1_all.deb" in readme
    assert "Lua.org, PUC-Rio" in (SHIPPED_HEADERS / "LICENSE").read_text()
    for h in ("lua.h", "luaconf.h", "lualib.h", "lauxlib.h"):
        assert (SHIPPED_HEADERS / h).is_file(), h


def test_an_http_server_without_curl_or_wget_downloads_with_python(
    tmp_path: Path, bare_env: dict[str, str], rock_server: RockServer
) -> None:
    """No curl or wget on PATH: luarocks' downloads go through panto's urllib
    stand-in (panto.extensions.rocks.fetch), from a real loopback server."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from panto.extensions.rocks import RockTree, sync

    seen: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, fmt: str, *args: object) -> None:
            seen.append(self.path)

    handler = functools.partial(Handler, directory=str(rock_server.path))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        env = {**bare_env, "PATH": path_without((*HIDDEN, "curl", "wget"), tmp_path / "no-dl")}
        assert shutil.which("curl", path=env["PATH"]) is None
        url = f"http://127.0.0.1:{httpd.server_address[1]}/"
        rep = sync(["greet 1.1-1"], servers=[url], env=env)
        assert rep.ok, rep.messages()
        assert any(p.endswith("greet-1.1-1.src.rock") for p in seen), seen
        home = Path(env.get("XDG_DATA_HOME", "")) / "panto"
        assert RockTree.default(home).installed_versions("greet") == ["1.1-1"]
        # a missing file: a clear failure, not a hang or a traceback
        (bad,) = sync(["nothere 1.0-1"], servers=[url], env=env).results
        assert bad.error is not None and bad.error.kind == "not-found", bad.message
        assert bad.message == f"no rock matches 'nothere 1.0-1' on {url}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_fetch_stand_in_speaks_curl(tmp_path: Path) -> None:
    from panto.extensions.rocks import fetch

    assert fetch.main(["--version"]) == 0
    out = tmp_path / "x"
    assert fetch.main(["-f", "-L", "http://127.0.0.1:9/x", "--output", str(out)]) == 7
    assert not out.exists()


def test_every_shipped_file_is_in_git() -> None:
    """``.gitignore`` ignores ``build/`` directories, and luarocks has one of
    its own (``luarocks/build/builtin.lua``): a checkout without it cannot
    build any rock.  (The checkout's copy: the installed package may sit in
    an ignored ``.venv/`` inside the checkout, as in CI.)"""
    vendor = Path(__file__).resolve().parents[2] / "python/panto/extensions/rocks/vendor"
    assert vendor.is_dir(), vendor
    r = subprocess.run(
        ["git", "ls-files", "--others", "--ignored", "--exclude-standard", str(vendor)],
        capture_output=True,
        text=True,
        cwd=vendor,
    )
    if r.returncode != 0:
        pytest.skip("not a git checkout")
    ignored = [ln for ln in r.stdout.splitlines() if "__pycache__" not in ln]
    assert ignored == []
    assert (vendor / "luarocks" / "luarocks" / "build" / "builtin.lua").is_file()
    assert (LUAROCKS_DIR / "luarocks" / "build" / "builtin.lua").is_file()  # and installed

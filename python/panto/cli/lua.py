"""``panto lua``: a ``lua``-compatible interpreter (Lua 5.4) in panto's
environment: the ``panto`` batteries, ``package.path``/``cpath`` pointing at
panto's rocks tree (plus ``./?.lua``), C modules loadable.

    usage: panto lua [options] [script [args]]
      -e stat   execute string 'stat'
      -i        enter interactive mode after executing 'script'
      -l mod    require library 'mod' into global 'mod' (-l g=mod: into 'g')
      -v        show version information
      -E        ignore environment variables (always the case: paths are set outright)
      -W        turn warnings on
      --        stop handling options
      -         stop handling options and execute stdin

Exit codes follow ``lua``: 0 on success, 1 on an error or bad usage,
``os.exit(n)`` exits with n.  The main chunk runs as a coroutine, so the
async batteries (``panto.time.sleep``, ``panto.process.spawn``, …) work at
the top level of a script.  Unlike inside extensions, ``os.execute``,
``io.popen`` and ``os.exit`` behave as in ``lua`` here.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

__all__ = ["main"]

PROGNAME = "lua"
COPYRIGHT = "Lua 5.4.8  Copyright (C) 1994-2025 Lua.org, PUC-Rio"
USAGE = f"""usage: {PROGNAME} [options] [script [args]]
Available options are:
  -e stat   execute string 'stat'
  -i        enter interactive mode after executing 'script'
  -l mod    require library 'mod' into global 'mod'
  -l g=mod  require library 'mod' into global 'g'
  -v        show version information
  -E        ignore environment variables
  -W        turn warnings on
  --        stop handling options
  -         stop handling options and execute stdin
"""


HELP = f"""usage: panto lua [options] [script [args]]

A `lua`-compatible interpreter (Lua 5.4) in panto's environment: the `panto`
batteries (panto.fs, panto.process, panto.time, panto.json, ...), package.path
and package.cpath pointing at panto's rocks tree (plus ./?.lua), C modules
loadable.  Exit status as `lua`: 0 on success, 1 on an error, os.exit(n) -> n.

{USAGE.split(chr(10), 1)[1]}"""


class _Usage(Exception):
    pass


def _parse(argv: list[str]) -> tuple[list[tuple[str, str]], bool, bool, int | None]:
    """-> (actions [('e'|'l', value)], interactive, version, script index or None)."""
    actions: list[tuple[str, str]] = []
    interactive = version = False
    i = 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith("-"):
            return actions, interactive, version, i
        if a == "-":
            return actions, interactive, version, i
        if a == "--":
            return actions, interactive, version, (i + 1 if i + 1 < len(argv) else None)
        if a in ("-i",):
            interactive = version = True
        elif a == "-v":
            version = True
        elif a in ("-E", "-W"):
            if a == "-W":
                actions.append(("W", ""))
        elif a[:2] in ("-e", "-l"):
            val = a[2:]
            if not val:
                i += 1
                if i >= len(argv) or argv[i].startswith("-") and argv[i] != "-":
                    raise _Usage(f"'{a[:2]}' needs argument")
                val = argv[i]
            actions.append((a[1], val))
        else:
            raise _Usage(f"unrecognized option '{a}'")
        i += 1
    return actions, interactive, version, None


def _popen_support(rt: Any) -> None:
    """Blocking os.execute / io.popen, as plain ``lua`` has them."""

    def execute(cmd: Any = None) -> Any:
        if cmd is None:
            return True
        sys.stdout.flush()
        rt.lua.execute(b"io.stdout:flush()")
        r = subprocess.run(cmd.decode() if isinstance(cmd, bytes) else str(cmd), shell=True)
        if r.returncode < 0:
            return (None, b"signal", -r.returncode)
        return (True if r.returncode == 0 else None, b"exit", r.returncode)

    class PFile:
        def __init__(self, cmd: str, mode: str) -> None:
            rt.lua.execute(b"io.stdout:flush()")
            self.p = subprocess.Popen(
                cmd,
                shell=True,
                stdout=subprocess.PIPE if "r" in mode else None,
                stdin=subprocess.PIPE if "w" in mode else None,
            )

        def read(self, fmt: Any = b"l") -> Any:
            out = self.p.stdout
            assert out is not None
            if isinstance(fmt, (int, float)):
                data = out.read(int(fmt))
                return data if data or int(fmt) == 0 else None
            f = (fmt.decode() if isinstance(fmt, bytes) else str(fmt)).lstrip("*")[:1]
            if f == "a":
                return out.read()
            if f in ("l", "L"):
                line = out.readline()
                if not line:
                    return None
                return line if f == "L" else line.rstrip(b"\n")
            if f == "n":
                line = out.readline().strip()
                try:
                    return int(line)
                except ValueError:
                    try:
                        return float(line)
                    except ValueError:
                        return None
            raise ValueError(f"bad format {f!r}")

        def write(self, data: bytes) -> None:
            assert self.p.stdin is not None
            self.p.stdin.write(data)

        def close(self) -> Any:
            for s in (self.p.stdin, self.p.stdout):
                if s is not None:
                    s.close()
            rc = self.p.wait()
            if rc < 0:
                return (None, b"signal", -rc)
            return (True if rc == 0 else None, b"exit", rc)

    def popen(cmd: bytes, mode: bytes = b"r") -> Any:
        return PFile(cmd.decode(), mode.decode())

    rt.lua.execute(
        b"""
        local execute, popen = ...
        os.execute = function(cmd) return execute(cmd) end
        local F = {}
        F.__index = F
        F.__name = "FILE*"
        function F:read(...)
          local n = select('#', ...)
          if n == 0 then return self.p.read('l') end
          local out = {}
          for i = 1, n do out[i] = self.p.read((select(i, ...))) end
          return table.unpack(out, 1, n)
        end
        function F:lines(fmt) return function() return self.p.read(fmt or 'l') end end
        function F:write(...)
          for i = 1, select('#', ...) do self.p.write(tostring((select(i, ...)))) end
          return self
        end
        function F:close() return self.p.close() end
        function F:flush() return self end
        F.__close = F.close
        io.popen = function(cmd, mode) return setmetatable({ p = popen(cmd, mode or 'r') }, F) end
        """,
        execute,
        popen,
    )


def _run_chunk(rt: Any, src: bytes, chunkname: str, args: list[Any]) -> None:
    if src.startswith(b"#"):
        nl = src.find(b"\n")
        src = b"--" + src[nl:] if nl >= 0 else b""  # keep line numbers

    async def go() -> None:
        fn = rt.load(src, chunkname)
        await rt.run_lua(fn, *args)

    try:
        rt.run(go())
    finally:
        rt.call(lambda: rt.lua.execute(b"io.stdout:flush()"))


def _report(e: BaseException) -> None:
    sys.stdout.flush()
    msg = str(e)
    sys.stderr.write(f"{PROGNAME}: {msg}\n")
    sys.stderr.flush()


def _repl(rt: Any) -> None:
    from panto.lua.runtime import LuaScriptError

    try:
        import readline  # noqa: F401 - line editing for input()
    except ImportError:  # pragma: no cover
        pass

    while True:
        try:
            line = input("> ")
        except EOFError:
            sys.stdout.write("\n")
            return
        except KeyboardInterrupt:
            sys.stdout.write("\n")
            continue
        src = line
        if src.startswith("="):
            src = "return " + src[1:]
        fn_src = None
        # an expression first (print its values), then a statement
        try:
            rt.call(lambda s=src: rt.load("return " + s + ";", "=stdin"))
            fn_src = "return " + src + ";"
        except LuaScriptError:
            while True:
                try:
                    rt.call(lambda s=src: rt.load(s, "=stdin"))
                    fn_src = src
                    break
                except LuaScriptError as e:
                    if str(e).endswith("<eof>"):
                        try:
                            src += "\n" + input(">> ")
                            continue
                        except EOFError:
                            pass
                    _report(e)
                    break
        if fn_src is None:
            continue
        try:
            res = rt.run(_eval_print(rt, fn_src))
            del res
        except LuaScriptError as e:
            _report(e)
        except KeyboardInterrupt:
            sys.stdout.write("\ninterrupted\n")


async def _eval_print(rt: Any, src: str) -> None:
    fn = rt.load(src, "=stdin")
    res = await rt.run_lua(fn)
    if res:
        printer = rt.lua.eval(b"function(...) print(...) io.stdout:flush() end")
        printer(*res)
    else:
        rt.lua.execute(b"io.stdout:flush()")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--help"], ["-h"]):
        sys.stdout.write(HELP)
        return 0
    try:
        actions, interactive, version, script = _parse(argv)
    except _Usage as e:
        sys.stderr.write(f"{PROGNAME}: {e}\n{USAGE}")
        return 1

    from panto.errors import ExtensionError
    from panto.lua.runtime import LuaRuntime, LuaScriptError

    try:
        rt = LuaRuntime(interpreter=True, thread_name="panto-lua-cli")
    except ExtensionError as e:  # lupa missing or broken: one line, no traceback
        sys.stderr.write(f"panto lua: {e}\n")
        return 1
    try:
        rt.call(_popen_support, rt)
        # the arg table: script at 0, its args after, interpreter args before
        full = [PROGNAME, *argv]
        sidx = (script + 1) if script is not None else 0
        rt.call(
            lambda: rt.lua.execute(
                b"local t = ... ; arg = {} ; for k, v in pairs(t) do arg[k] = v end",
                rt.lua.table_from({i - sidx: a.encode() for i, a in enumerate(full)}),
            )
        )
        if version:
            sys.stdout.write(COPYRIGHT + "\n")
            sys.stdout.flush()
        for kind, value in actions:
            if kind == "e":
                _run_chunk(rt, value.encode(), "=(command line)", [])
            elif kind == "l":
                glob, _, mod = value.partition("=")
                if not mod:
                    glob, mod = value, value
                glob = glob.split("-")[0]
                _run_chunk(rt, f"{glob} = require({mod!r})".encode(), "=(command line)", [])
            elif kind == "W":
                rt.call(lambda: rt.lua.execute(b"warn('@on')"))
        if script is not None:
            name = argv[script]
            script_args = [a.encode() for a in argv[script + 1 :]]
            if name == "-" and (script == 0 or argv[script - 1] != "--"):
                src = sys.stdin.buffer.read()
                _run_chunk(rt, src, "=stdin", script_args)
            else:
                try:
                    with open(name, "rb") as f:
                        src = f.read()
                except OSError:
                    sys.stderr.write(f"{PROGNAME}: cannot open {name}\n")
                    return 1
                _run_chunk(rt, src, "@" + name, script_args)
        if interactive:
            if not version:
                sys.stdout.write(COPYRIGHT + "\n")
            _repl(rt)
        elif script is None and not actions and not version:
            if sys.stdin.isatty():
                sys.stdout.write(COPYRIGHT + "\n")
                _repl(rt)
            else:
                _run_chunk(rt, sys.stdin.buffer.read(), "=stdin", [])
        return 0
    except LuaScriptError as e:
        _report(e)
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROGNAME}: interrupted!\n")
        return 130
    finally:
        sys.stdout.flush()
        rt.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

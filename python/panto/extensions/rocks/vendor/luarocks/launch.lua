-- panto's launcher for the vendored luarocks (not part of upstream luarocks).
-- Run by `panto lua`:  panto lua launch.lua luarocks|luarocks-admin ARGS...
-- Puts the vendored modules first on package.path, gives luarocks the
-- settings a `make install` would have hardcoded, then runs the upstream
-- command script with ARGS.
local here = arg[0]:match("^(.*)[/\\][^/\\]*$") or "."
local which = ...
if which ~= "luarocks" and which ~= "luarocks-admin" then
  io.stderr:write("launch.lua: first argument must be luarocks or luarocks-admin\n")
  os.exit(2)
end
package.path = here .. "/?.lua;" .. here .. "/?/init.lua;" .. package.path
package.loaded["luarocks.core.hardcoded"] = {
  LUA_VERSION = "5.4",
  -- no system-wide config: panto passes LUAROCKS_CONFIG for its tree
  SYSCONFDIR = os.getenv("PANTO_LUAROCKS_SYSCONFDIR") or (here .. "/no-sysconf"),
}
-- luarocks names itself from the bottom of the call stack, which under
-- `panto lua` is Python's driver: name the command the user typed instead.
local util = require("luarocks.util")
local progname = os.getenv("PANTO_LUAROCKS_PROGNAME") or which
util.this_program = function() return progname end
local script = here .. "/bin/" .. which
arg[0] = script
local chunk = assert(loadfile(script))
return chunk(select(2, ...))

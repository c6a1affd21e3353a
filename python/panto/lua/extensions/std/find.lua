-- std.find: list files matching a glob.
local MAX_RESULTS = 500
-- directories that are skipped unless the pattern names them
local SKIP = { [".git"] = true, ["node_modules"] = true, ["__pycache__"] = true, [".venv"] = true }

local function skipped(path, pattern)
  for seg in path:gmatch("[^/]+") do
    if SKIP[seg] and not pattern:find(seg, 1, true) then return true end
  end
  return false
end

local function find(input, ctx)
  local pattern = input.pattern
  if type(pattern) ~= "string" or pattern == "" then panto.fail("find: 'pattern' is required") end
  local path = input.path
  if path == nil or path == "" then path = "." end
  if type(path) ~= "string" then panto.fail("find: 'path' must be a string") end
  local root = path
  if root:sub(1, 1) ~= "/" and ctx and ctx.cwd then root = ctx.cwd .. "/" .. root end
  local st = panto.fs.stat(root)
  if not st then panto.fail("find: no such directory: " .. path) end
  if st.type ~= "directory" then panto.fail("find: not a directory: " .. path) end
  local limit = math.tointeger(input.limit) or MAX_RESULTS
  if limit < 1 then panto.fail("find: 'limit' must be at least 1") end

  local found = panto.fs.glob(pattern, { cwd = root, hidden = input.hidden == true })
  local out = {}
  local total = 0
  for _, p in ipairs(found) do
    if not skipped(p, pattern) then
      total = total + 1
      if #out < limit then
        out[#out + 1] = (path == "." and p) or (path:gsub("/+$", "") .. "/" .. p)
      end
    end
  end
  if total == 0 then return "No files match " .. pattern .. " under " .. path .. "." end
  local text = table.concat(out, "\n")
  if total > #out then
    text = text .. ("\n\n[showing %d of %d paths; narrow the pattern or raise limit]"):format(#out, total)
  end
  return text
end

return {
  name = "std.find",
  activate = function()
    panto.ext.register_tool {
      name = "find",
      description = "Find files by glob pattern under path (default: the working directory), "
        .. "e.g. '**/*.py' or 'src/**/test_*.lua' ('**' spans directories). Returns matching "
        .. "paths sorted, up to " .. MAX_RESULTS .. " by default. Hidden files are skipped "
        .. "unless hidden=true; .git, node_modules, __pycache__ and .venv unless the pattern "
        .. "names them.",
      schema = {
        type = "object",
        properties = {
          pattern = { type = "string", description = "Glob pattern, relative to path" },
          path = { type = "string", description = "Directory to search from (default: .)" },
          hidden = { type = "boolean", description = "Include hidden files and directories" },
          limit = { type = "integer", minimum = 1, description = "Most paths to return" },
        },
        required = { "pattern" },
      },
      handler = find,
    }
  end,
}

-- std.grep: search file contents with a regular expression (ripgrep when
-- installed, else git grep inside a repository, else grep -E).
local MAX_MATCHES = 200       -- lines of output by default
local MAX_LINE = 500          -- longer matching lines are cut
local OUTPUT_LIMIT = 200000   -- bytes read from the searcher
local TIMEOUT = 60

local function lines_of(s)
  local out = {}
  for line in s:gmatch("[^\n]+") do out[#out + 1] = line end
  return out
end

local function rg_args(input, path)
  local args = { "--line-number", "--no-heading", "--color", "never", "--max-columns",
    tostring(MAX_LINE), "--max-columns-preview" }
  if input.ignore_case then args[#args + 1] = "--ignore-case" end
  if input.fixed_strings then args[#args + 1] = "--fixed-strings" end
  if input.glob then args[#args + 1] = "--glob"; args[#args + 1] = input.glob end
  local ctx = math.tointeger(input.context)
  if ctx and ctx > 0 then args[#args + 1] = "--context"; args[#args + 1] = tostring(ctx) end
  args[#args + 1] = "--regexp"
  args[#args + 1] = input.pattern
  args[#args + 1] = path
  return args
end

-- directories grep -r skips: std.find's list (ripgrep and git grep skip what
-- .gitignore names instead)
local SKIP_DIRS = { ".git", "node_modules", "__pycache__", ".venv" }

local function grep_args(input, path)
  local args = { "-rnI", "--color=never", "--devices=skip" }  -- FIFOs and devices block
  local named = {}  -- a skipped name the path itself holds is searched (as std.find does)
  for seg in path:gmatch("[^/]+") do named[seg] = true end
  for _, d in ipairs(SKIP_DIRS) do
    if not named[d] then args[#args + 1] = "--exclude-dir=" .. d end
  end
  args[#args + 1] = input.fixed_strings and "-F" or "-E"
  if input.ignore_case then args[#args + 1] = "-i" end
  if input.glob then args[#args + 1] = "--include=" .. input.glob end
  local ctx = math.tointeger(input.context)
  if ctx and ctx > 0 then args[#args + 1] = "-C" .. ctx end
  args[#args + 1] = "-e"
  args[#args + 1] = input.pattern
  args[#args + 1] = path
  return args
end

-- git grep over the tracked and the untracked-but-not-ignored files of the
-- repository, run in `dir` over `spec` (its paths come back relative to dir)
local function git_grep_args(input, dir, spec)
  local args = { "-C", dir, "grep", "--untracked", "-n", "-I", "--no-color" }
  args[#args + 1] = input.fixed_strings and "-F" or "-E"
  if input.ignore_case then args[#args + 1] = "-i" end
  local ctx = math.tointeger(input.context)
  if ctx and ctx > 0 then args[#args + 1] = "-C" .. ctx end
  args[#args + 1] = "-e"
  args[#args + 1] = input.pattern
  args[#args + 1] = "--"
  if input.glob then
    -- like grep --include: a glob without a slash matches a file's name at any depth
    local g = input.glob:find("/", 1, true) and input.glob or "**/" .. input.glob
    args[#args + 1] = ":(glob)" .. (spec == "." and "" or spec .. "/") .. g
    if spec ~= "." then args[#args + 1] = ":(glob)" .. spec end  -- a file: its own name
  else
    args[#args + 1] = spec
  end
  return args
end

local function search(cmd, args, cwd)
  local ok, r = pcall(panto.process.spawn, {
    cmd = cmd, args = args, cwd = cwd, timeout = TIMEOUT, output_limit = OUTPUT_LIMIT,
  })
  if not ok then
    if tostring(r):find("No such file", 1, true) then
      if not panto.fs.exists(cwd or ".") then panto.fail(r) end  -- the directory is gone
      return nil  -- not installed
    end
    panto.fail(r)
  end
  return r
end

-- whether `path` is in a git work tree and not ignored by it
local function in_repository(path, cwd)
  local ok, r = pcall(panto.process.spawn, {
    cmd = "git", args = { "-C", path, "rev-parse", "--is-inside-work-tree" }, cwd = cwd, timeout = 10,
  })
  if not ok or r.code ~= 0 or not (r.stdout or ""):find("true", 1, true) then return false end
  -- a path the repository ignores (grepping inside .venv/ on purpose): not via git
  local ig = panto.process.spawn { cmd = "git", args = { "-C", path, "check-ignore", "-q", "." },
    cwd = cwd, timeout = 10 }
  return ig.code ~= 0
end

-- without ripgrep: git grep inside a repository (what .gitignore names is
-- skipped, as rg does), else grep -r with std.find's skip list
local function fallback(input, path, cwd)
  local abs = path
  if abs:sub(1, 1) ~= "/" and cwd then abs = cwd .. "/" .. abs end
  local st = panto.fs.stat(abs)
  local dir, spec, prefix = path, ".", path:gsub("/+$", "")
  if st and st.type ~= "directory" then
    dir, spec = path:match("^(.*)/([^/]*)$")
    if not dir then dir, spec = ".", path end
    if dir == "" then dir = "/" end
    prefix = dir
  end
  if st and in_repository(dir, cwd) then
    local r = search("git", git_grep_args(input, dir, spec), cwd)
    if r then
      -- git prints paths relative to dir: make them path's, as grep would
      if prefix ~= "." and r.stdout then
        local lead = prefix == "/" and "/" or prefix .. "/"
        r.stdout = r.stdout:gsub("[^\n]+", function(line)
          if line == "--" then return line end
          return lead .. line
        end)
      end
      return r, "git grep"
    end
  end
  local r = search("grep", grep_args(input, path), cwd)
  if r == nil then panto.fail("grep: neither ripgrep (rg) nor grep is installed") end
  return r, "grep"
end

-- panto.fs.stat's types that are not files, as the errors name them
local SPECIAL = { fifo = "a FIFO (named pipe)", char_device = "a character device",
  block_device = "a block device", socket = "a socket" }

local function grep(input, ctx)
  local pattern = input.pattern
  if type(pattern) ~= "string" or pattern == "" then panto.fail("grep: 'pattern' is required") end
  local path = input.path
  if path == nil or path == "" then path = "." end
  if type(path) ~= "string" then panto.fail("grep: 'path' must be a string") end
  local cwd = ctx and ctx.cwd or nil
  local limit = math.tointeger(input.limit) or MAX_MATCHES
  if limit < 1 then panto.fail("grep: 'limit' must be at least 1") end
  local abs = path
  if abs:sub(1, 1) ~= "/" and cwd then abs = cwd .. "/" .. abs end
  local st = panto.fs.stat(abs)
  if st and st.type ~= "file" and st.type ~= "directory" then
    -- a FIFO would block the search until its timeout
    panto.fail(("grep: %s is %s, not a regular file or a directory"):format(path, SPECIAL[st.type]
      or "a special file"))
  end

  local r = search("rg", rg_args(input, path), cwd)
  local tool = "rg"
  if r == nil then
    r, tool = fallback(input, path, cwd)
  end
  if r.timed_out then panto.fail(("grep: the search took longer than %d s; narrow path or glob"):format(TIMEOUT)) end
  if r.code == 1 then return "No matches." end
  if r.code ~= 0 then
    local err = (r.stderr or ""):gsub("%s+$", "")
    panto.fail(("grep: %s failed (exit %s): %s"):format(tool, tostring(r.code), err))
  end
  local lines = lines_of(r.stdout or "")
  local out = {}
  for i = 1, math.min(#lines, limit) do
    local line = lines[i]
    if #line > MAX_LINE + 80 then line = line:sub(1, MAX_LINE) .. " … [line cut]" end
    out[#out + 1] = line
  end
  local text = table.concat(out, "\n")
  if #lines > limit or (r.stdout_omitted or 0) > 0 then
    text = text .. ("\n\n[showing %d of %s matching lines; narrow the pattern, path or glob, "
      .. "or raise limit]"):format(#out, (r.stdout_omitted or 0) > 0 and "more than " .. #lines or tostring(#lines))
  end
  return text
end

return {
  name = "std.grep",
  activate = function()
    panto.ext.register_tool {
      name = "grep",
      description = "Search file contents for a regular expression, recursively from path "
        .. "(default: the working directory). Returns matching lines as `path:line:text` "
        .. "(up to " .. MAX_MATCHES .. " by default). Uses ripgrep when installed (Rust regex "
        .. "syntax; .gitignore respected, hidden and binary files skipped), else git grep -E in "
        .. "a git repository (.gitignore respected), else grep -E. "
        .. "Prefer it over bash grep.",
      schema = {
        type = "object",
        properties = {
          pattern = { type = "string", description = "The regular expression to search for" },
          path = { type = "string", description = "File or directory to search (default: .)" },
          glob = { type = "string", description = "Only files matching this glob, e.g. '*.py'" },
          ignore_case = { type = "boolean", description = "Case-insensitive search" },
          fixed_strings = { type = "boolean", description = "Treat pattern as a literal string" },
          context = { type = "integer", minimum = 0, description = "Lines of context around each match" },
          limit = { type = "integer", minimum = 1, description = "Most output lines to return" },
        },
        required = { "pattern" },
      },
      handler = grep,
    }
  end,
}

-- std.edit: replace an exact, unique string in a file.
local function count_plain(s, needle)
  local n, pos = 0, 1
  while true do
    local i, j = s:find(needle, pos, true)
    if not i then return n end
    n = n + 1
    pos = j + 1
  end
end

local function replace_plain(s, old, new, all)
  local parts, pos, n, first = {}, 1, 0, nil
  while true do
    local i, j = s:find(old, pos, true)
    if not i then break end
    first = first or i
    parts[#parts + 1] = s:sub(pos, i - 1)
    parts[#parts + 1] = new
    pos = j + 1
    n = n + 1
    if not all then break end
  end
  parts[#parts + 1] = s:sub(pos)
  return table.concat(parts), n, first
end

-- a hint for a failed match: where the first non-blank line of old_string occurs
local function hint(data, old)
  local first = old:match("^%s*([^\n]-)%s*\n") or old:match("^%s*(.-)%s*$")
  if not first or #first < 3 then return "" end
  local lines, n = {}, 0
  for line in (data .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if line:find(first, 1, true) then lines[#lines + 1] = tostring(n) end
    if #lines >= 5 then break end
  end
  if #lines == 0 then return "" end
  return (" (its first line appears at line %s: check whitespace, indentation and the "
    .. "following lines against a fresh read)"):format(table.concat(lines, ", "))
end

local function edit(input, ctx)
  local path, old, new = input.path, input.old_string, input.new_string
  local all = input.replace_all == true
  if type(path) ~= "string" or path == "" then panto.fail("edit: 'path' is required") end
  -- relative paths are the agent's working directory's, not the process's
  local file = path
  if file:sub(1, 1) ~= "/" and ctx and ctx.cwd then file = ctx.cwd .. "/" .. file end
  if type(old) ~= "string" then panto.fail("edit: 'old_string' must be a string") end
  if type(new) ~= "string" then panto.fail("edit: 'new_string' must be a string") end
  if old == new then panto.fail("edit: old_string and new_string are identical; nothing to change") end

  local st = panto.fs.stat(file)
  if not st then
    if old == "" then
      local n = panto.fs.write(file, new)
      return ("Created %s (%d bytes)"):format(path, n)
    end
    panto.fail("file not found: " .. path)
  end
  if st.type == "directory" then panto.fail(path .. " is a directory") end
  local data = panto.fs.read(file)
  if data:sub(1, 8192):find("\0", 1, true) then
    panto.fail(path .. " looks like a binary file; edit refuses to change it")
  end

  if old == "" then
    if #data > 0 then
      panto.fail(("edit: old_string is empty but %s is not empty; give the exact text to replace "
        .. "(or use write to replace the whole file)"):format(path))
    end
    local n = panto.fs.write(file, new)
    return ("Wrote %d bytes to the empty file %s"):format(n, path)
  end
  if #data == 0 then
    panto.fail(("edit: %s is empty, so old_string cannot match (use an empty old_string to fill it)")
      :format(path))
  end

  -- keep CRLF files CRLF: match LF-only strings against CRLF text
  local crlf = data:find("\r\n", 1, true) ~= nil
  local count = count_plain(data, old)
  if count == 0 and crlf and not old:find("\r", 1, true) and old:find("\n", 1, true) then
    local old2 = old:gsub("\n", "\r\n")
    local c2 = count_plain(data, old2)
    if c2 > 0 then
      old, new, count = old2, new:gsub("\r?\n", "\r\n"), c2
    end
  elseif crlf and not old:find("\n", 1, true) and not new:find("\r", 1, true) then
    -- single-line old_string in a CRLF file: new lines inside new_string get CRLF too
    new = new:gsub("\n", "\r\n")
  end

  if count == 0 then
    panto.fail(("edit: old_string not found in %s%s"):format(path, hint(data, old)))
  end
  if count > 1 and not all then
    panto.fail(("edit: old_string occurs %d times in %s; include more surrounding lines to make it "
      .. "unique, or set replace_all=true to replace every occurrence"):format(count, path))
  end
  local result, n = replace_plain(data, old, new, all)
  panto.fs.write(file, result)
  local diff = panto.diff(data, result, { from = "a/" .. path, to = "b/" .. path })
  return ("Edited %s: replaced %d occurrence%s.\n%s"):format(path, n, n == 1 and "" or "s", diff)
end

return {
  name = "std.edit",
  activate = function()
    panto.ext.register_tool {
      name = "edit",
      description = "Replace text in a file and return a unified diff of the change. "
        .. "old_string must match the file exactly (including "
        .. "whitespace and indentation, without the line-number prefix that read shows) and "
        .. "occur exactly once, unless replace_all is true. Line endings (LF/CRLF) and the "
        .. "file mode are preserved. An empty old_string creates a new file or fills an empty one.",
      schema = {
        type = "object",
        properties = {
          path = { type = "string", description = "Path of the file to edit" },
          old_string = { type = "string", description = "The exact text to replace" },
          new_string = { type = "string", description = "The replacement text" },
          replace_all = { type = "boolean", description = "Replace every occurrence (default false)" },
        },
        required = { "path", "old_string", "new_string" },
      },
      handler = edit,
    }
  end,
}

-- std.ls: list a directory.
local MAX_ENTRIES = 1000

local function human(n)
  if n < 1024 then return tostring(n) end
  local units = { "K", "M", "G", "T" }
  local v, i = n / 1024, 1
  while v >= 1024 and i < #units do v = v / 1024; i = i + 1 end
  return ("%.1f%s"):format(v, units[i])
end

local function ls(input, ctx)
  local path = input.path
  if path == nil or path == "" then path = "." end
  if type(path) ~= "string" then panto.fail("ls: 'path' must be a string") end
  local full = path
  if full:sub(1, 1) ~= "/" and ctx and ctx.cwd then full = ctx.cwd .. "/" .. full end
  local st = panto.fs.stat(full)
  if not st then panto.fail("ls: no such file or directory: " .. path) end
  if st.type ~= "directory" then
    return ("%s\t%s"):format(path, human(st.size))
  end
  local names = panto.fs.list(full)
  local dirs, files = {}, {}
  for _, name in ipairs(names) do
    if input.all == true or name:sub(1, 1) ~= "." then
      local s = panto.fs.stat(full .. "/" .. name)
      if s and s.type == "directory" then
        dirs[#dirs + 1] = name .. "/"
      else
        files[#files + 1] = ("%s\t%s"):format(name, s and human(s.size) or "?")
      end
    end
  end
  local out = {}
  for _, d in ipairs(dirs) do out[#out + 1] = d end
  for _, f in ipairs(files) do out[#out + 1] = f end
  if #out == 0 then return "(empty directory: " .. path .. ")" end
  local total = #out
  if total > MAX_ENTRIES then
    for i = total, MAX_ENTRIES + 1, -1 do out[i] = nil end
    out[#out + 1] = ("\n[showing %d of %d entries]"):format(MAX_ENTRIES, total)
  end
  return table.concat(out, "\n")
end

return {
  name = "std.ls",
  activate = function()
    panto.ext.register_tool {
      name = "ls",
      description = "List a directory (default: the working directory): subdirectories first "
        .. "(with a trailing /), then files with their sizes. Hidden entries only with all=true.",
      schema = {
        type = "object",
        properties = {
          path = { type = "string", description = "Directory to list (default: .)" },
          all = { type = "boolean", description = "Include hidden entries (names starting with .)" },
        },
      },
      handler = ls,
    }
  end,
}

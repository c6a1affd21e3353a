-- std.write: create or overwrite a file (parents created, atomic replace).
-- panto.fs.stat's types that are not files, as the errors name them
local SPECIAL = { fifo = "a FIFO (named pipe)", char_device = "a character device",
  block_device = "a block device", socket = "a socket" }

local function write(input, ctx)
  local path, content = input.path, input.content
  if type(path) ~= "string" or path == "" then panto.fail("write: 'path' is required") end
  -- relative paths are the agent's working directory's, not the process's
  local file = path
  if file:sub(1, 1) ~= "/" and ctx and ctx.cwd then file = ctx.cwd .. "/" .. file end
  if type(content) ~= "string" then panto.fail("write: 'content' must be a string") end
  local st = panto.fs.stat(file)
  if st and st.type == "directory" then panto.fail(path .. " is a directory") end
  if st and st.type ~= "file" then
    -- replacing a FIFO or a device node with a regular file is never what was meant
    panto.fail(("%s is %s, not a regular file; write only writes regular files (left as it is)")
      :format(path, SPECIAL[st.type] or "a special file"))
  end
  local n = panto.fs.write(file, content)
  -- count the lines without gsub (a copy of the whole content)
  local lines, at = 0, 1
  while true do
    local nl = content:find("\n", at, true)
    if not nl then break end
    lines, at = lines + 1, nl + 1
  end
  if #content > 0 and content:sub(-1) ~= "\n" then lines = lines + 1 end
  return ("%s %s: %d bytes, %d lines"):format(st and "Overwrote" or "Created", path, n, lines)
end

return {
  name = "std.write",
  activate = function()
    panto.ext.register_tool {
      name = "write",
      description = "Write a file with the given content, replacing it if it exists (atomically: "
        .. "readers never see a half-written file; an existing file keeps its mode). Missing "
        .. "parent directories are created. Prefer edit for changing part of an existing file.",
      schema = {
        type = "object",
        properties = {
          path = { type = "string", description = "Path of the file to write" },
          content = { type = "string", description = "The complete new content" },
        },
        required = { "path", "content" },
      },
      handler = write,
    }
  end,
}

-- std.read: read a text file with line numbers.
local MAX_LINES = 2000          -- default line limit
local MAX_LINE_BYTES = 2000     -- longer lines are cut
local MAX_OUTPUT_BYTES = 100000 -- whole-result cap
local MAX_FILE_BYTES = 64 * 1024 * 1024
-- panto.fs.stat's types that are not files, as the errors name them
local SPECIAL = { fifo = "a FIFO (named pipe)", char_device = "a character device",
  block_device = "a block device", socket = "a socket" }

-- cut s to at most n bytes without splitting a UTF-8 sequence
local function cut_utf8(s, n)
  if #s <= n then return s end
  local i = n
  while i > 0 and (s:byte(i + 1) or 0) & 0xC0 == 0x80 do i = i - 1 end
  return s:sub(1, i)
end

-- Anthropic rejects an image over 5 MiB of base64 (and then every later
-- request of the session): 3.75 MiB of image; and a side over 8000 pixels
local MAX_IMAGE_BYTES = 5 * 1024 * 1024 // 4 * 3
local MAX_IMAGE_SIDE = 8000
-- names that are read as images when their content is one (see sniff)
local IMAGE_SUFFIXES = { png = true, jpg = true, jpeg = true, gif = true, webp = true }

-- the media type from the first bytes (the name can lie: a Git LFS pointer,
-- an SVG or a JPEG named .png); nil when it is none of the four types
local function sniff(data)
  if data:sub(1, 8) == "\137PNG\r\n\26\n" then return "image/png" end
  if data:sub(1, 3) == "\255\216\255" then return "image/jpeg" end
  local gif = data:sub(1, 6)
  if gif == "GIF87a" or gif == "GIF89a" then return "image/gif" end
  if data:sub(1, 4) == "RIFF" and data:sub(9, 12) == "WEBP" then return "image/webp" end
  return nil
end

-- an image file: returned as an image (panto.tool_result), not as text;
-- nil when its content is not an image after all (then it is read as text)
local function read_image(path, file, size)
  if size > MAX_IMAGE_BYTES then
    panto.fail(("%s is an image of %d bytes, over the %d-byte limit for images "
      .. "(5 MiB in base64); make a smaller copy (e.g. a JPEG) and read that")
      :format(path, size, MAX_IMAGE_BYTES))
  end
  local data = panto.fs.read(file, { limit = MAX_IMAGE_BYTES + 1 })
  local media_type = sniff(data)
  if not media_type then return nil end
  local w, h
  if media_type == "image/png" and #data >= 24 then
    w, h = string.unpack(">I4>I4", data, 17)
  elseif media_type == "image/gif" and #data >= 10 then
    w, h = string.unpack("<I2<I2", data, 7)
  end
  if w and math.max(w, h) > MAX_IMAGE_SIDE then
    panto.fail(("%s is %dx%d pixels, over the %d pixels a side the model accepts; "
      .. "make a smaller copy (e.g. with ImageMagick: convert IN -resize 2000x2000 OUT) and read that")
      :format(path, w, h, MAX_IMAGE_SIDE))
  end
  return panto.tool_result {
    content = ("Image file %s (%s, %d bytes), attached."):format(path, media_type, #data),
    images = { { media_type = media_type, data = data } },
  }
end

local function read(input, ctx)
  local path = input.path
  if type(path) ~= "string" or path == "" then panto.fail("read: 'path' is required") end
  -- relative paths are the agent's working directory's, not the process's
  local file = path
  if file:sub(1, 1) ~= "/" and ctx and ctx.cwd then file = ctx.cwd .. "/" .. file end
  local offset = math.tointeger(input.offset) or 1
  local limit = math.tointeger(input.limit) or MAX_LINES
  if offset < 1 then panto.fail("read: 'offset' is a 1-based line number (got " .. offset .. ")") end
  if limit < 1 then panto.fail("read: 'limit' must be at least 1") end

  local st = panto.fs.stat(file)
  if not st then panto.fail("file not found: " .. path) end
  if st.type == "directory" then
    panto.fail(path .. " is a directory, not a file (list it with bash, e.g. `ls -la " .. path .. "`)")
  end
  if st.type ~= "file" then
    -- a FIFO blocks, /dev/zero never ends: regular files only
    panto.fail(("%s is %s, not a regular file; read only reads regular files")
      :format(path, SPECIAL[st.type] or "a special file"))
  end
  local ext = path:match("%.([%w]+)$")
  if ext and IMAGE_SUFFIXES[ext:lower()] then
    local result = read_image(path, file, st.size)
    if result then return result end
  end
  if st.size > MAX_FILE_BYTES then
    panto.fail(("%s is too large to read (%d bytes); use bash (head, sed -n, grep) to look at parts of it")
      :format(path, st.size))
  end
  -- bounded even when the size lies (a file growing meanwhile, /proc)
  local data = panto.fs.read(file, { limit = MAX_FILE_BYTES + 1 })
  if #data > MAX_FILE_BYTES then
    panto.fail(("%s is too large to read (over %d bytes); use bash (head, sed -n, grep) to look at parts of it")
      :format(path, MAX_FILE_BYTES))
  end
  if data:sub(1, 8192):find("\0", 1, true) then
    panto.fail(("%s looks like a binary file (%d bytes); not shown"):format(path, #data))
  end
  if #data == 0 then return "(empty file: " .. path .. ")" end

  local out, size, n, shown_last = {}, 0, 0, 0
  local pos, total_len = 1, #data
  local stopped_for_size = false
  local truncated_lines = 0
  while pos <= total_len do
    local nl = data:find("\n", pos, true)
    local line
    if nl then line = data:sub(pos, nl - 1); pos = nl + 1 else line = data:sub(pos); pos = total_len + 1 end
    n = n + 1
    if n >= offset and n < offset + limit and not stopped_for_size then
      if line:sub(-1) == "\r" then line = line:sub(1, -2) end
      if #line > MAX_LINE_BYTES then
        local kept = cut_utf8(line, MAX_LINE_BYTES)
        line = kept .. (" … [line truncated: %d more bytes]"):format(#line - #kept)
        truncated_lines = truncated_lines + 1
      end
      local row = ("%6d\t%s"):format(n, line)
      if size + #row + 1 > MAX_OUTPUT_BYTES and #out > 0 then
        stopped_for_size = true
      else
        out[#out + 1] = row
        size = size + #row + 1
        shown_last = n
      end
    end
  end
  local total = n
  if offset > total then
    panto.fail(("offset %d is past the end of %s (%d lines)"):format(offset, path, total))
  end
  local notes = {}
  if shown_last < total then
    local why = stopped_for_size and ("output limit of %d bytes reached"):format(MAX_OUTPUT_BYTES)
      or ("limit of %d lines"):format(limit)
    notes[#notes + 1] = ("[showing lines %d-%d of %d (%s); use offset=%d to read more]")
      :format(offset, shown_last, total, why, shown_last + 1)
  end
  if truncated_lines > 0 then
    notes[#notes + 1] = ("[%d long line(s) cut at %d bytes]"):format(truncated_lines, MAX_LINE_BYTES)
  end
  local text = table.concat(out, "\n")
  if #notes > 0 then text = text .. "\n\n" .. table.concat(notes, "\n") end
  return text
end

return {
  name = "std.read",
  activate = function()
    panto.ext.register_tool {
      name = "read",
      description = "Read a text file. Returns its lines numbered like `cat -n` (number, tab, "
        .. "text). By default up to " .. MAX_LINES .. " lines from the start; use offset "
        .. "(1-based line number) and limit to page through long files. Lines longer than "
        .. MAX_LINE_BYTES .. " bytes are cut. Image files (png, jpg, gif, webp) are returned as "
        .. "images; other binary files are refused. Read a file before editing it.",
      schema = {
        type = "object",
        properties = {
          path = { type = "string", description = "Path of the file (absolute or relative to the working directory)" },
          offset = { type = "integer", minimum = 1, description = "First line to show (1-based)" },
          limit = { type = "integer", minimum = 1, description = "How many lines to show" },
        },
        required = { "path" },
      },
      handler = read,
    }
  end,
}

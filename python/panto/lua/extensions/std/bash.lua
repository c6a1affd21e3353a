-- std.bash: run a shell command in its own process group.
local DEFAULT_TIMEOUT = 120  -- seconds
local MAX_TIMEOUT = 600
local OUTPUT_LIMIT = 30000   -- bytes kept: the first and last half

local function run(input, ctx)
  local command = input.command
  if type(command) ~= "string" or command:match("^%s*$") then
    panto.fail("bash: 'command' is required")
  end
  local timeout = DEFAULT_TIMEOUT
  if input.timeout ~= nil then
    timeout = tonumber(input.timeout)
    -- (t == t: not NaN; JSON from the model can say NaN, Infinity or 1e999)
    if not (timeout and timeout == timeout and timeout > 0 and timeout <= MAX_TIMEOUT) then
      panto.fail(("bash: 'timeout' must be a number of seconds, > 0 and at most %d (got %s)")
        :format(MAX_TIMEOUT, tostring(input.timeout)))
    end
  end
  local opts = {
    cmd = "bash", args = { "-c", command },
    cwd = ctx and ctx.cwd or nil,
    timeout = timeout,
    merge_stderr = true,
    output_limit = OUTPUT_LIMIT,
    env = { PAGER = "cat", GIT_PAGER = "cat", GIT_TERMINAL_PROMPT = "0" },
  }
  local ok, r = pcall(panto.process.spawn, opts)
  if not ok and tostring(r):find("No such file", 1, true) and not panto.fs.exists(opts.cwd or ".") then
    panto.fail(r)
  elseif not ok and tostring(r):find("No such file", 1, true) then
    opts.cmd = "/bin/sh"
    r = panto.process.spawn(opts)
  elseif not ok then
    panto.fail(r)
  end
  local out = r.stdout or ""
  local parts = {}
  if (r.stdout_omitted or 0) > 0 then
    local half = OUTPUT_LIMIT // 2
    local head, tail = out:sub(1, half), out:sub(half + 1)
    parts[#parts + 1] = head
    parts[#parts + 1] = ("\n\n[... %d bytes of output omitted (of %d); showing the first and "
      .. "last %d bytes — redirect to a file and read parts of it, or filter with grep/head/tail ...]\n\n")
      :format(r.stdout_omitted, r.stdout_bytes, half)
    parts[#parts + 1] = tail
  else
    parts[#parts + 1] = out
  end
  local text = table.concat(parts)
  if text == "" then text = "(no output)" end
  local status
  if r.timed_out then
    status = ("[timed out after %g s: the command and everything it started were killed]"):format(timeout)
  elseif r.signal then
    status = ("[killed by signal %d]"):format(r.signal)
  elseif r.code ~= 0 then
    status = ("[exit code %d]"):format(r.code)
  end
  if status then
    if text:sub(-1) ~= "\n" then text = text .. "\n" end
    text = text .. status
  end
  if r.sandbox_note then  -- the sandbox probably blocked it: say so (and how to allow it)
    if text:sub(-1) ~= "\n" then text = text .. "\n" end
    text = text .. r.sandbox_note
  end
  if r.timed_out or r.signal or r.code ~= 0 then
    return nil, text  -- an is_error result that still shows the output
  end
  return text
end

return {
  name = "std.bash",
  activate = function()
    panto.ext.register_tool {
      name = "bash",
      description = "Run a bash command in the working directory and return its combined "
        .. "stdout and stderr (the first and last " .. (OUTPUT_LIMIT // 2) .. " bytes when longer) "
        .. "and a note with the exit code when it is not 0. Each call is a fresh shell: cd and "
        .. "variables do not persist. stdin is empty. timeout is in seconds (default "
        .. DEFAULT_TIMEOUT .. ", max " .. MAX_TIMEOUT .. "); on timeout or cancel the command "
        .. "and every process it started are killed. Avoid interactive commands.",
      schema = {
        type = "object",
        properties = {
          command = { type = "string", description = "The command to run" },
          timeout = { type = "number", description = "Seconds before the command is killed" },
          description = { type = "string", description = "A few words on what the command does" },
        },
        required = { "command" },
      },
      timeout = MAX_TIMEOUT + 30,
      handler = run,
    }
  end,
}

-- panto's Lua prelude: builds the `panto` global on top of the host table
-- that the Python runtime passes in.  Runs once per Lua state.
--
-- Async batteries are Lua stubs that yield a tagged request (TAG, op) to the
-- Python driver, which awaits `op` on the event loop and resumes the
-- coroutine with (true, value) or (false, message).  `coroutine.resume` and
-- `coroutine.wrap` are replaced so that a tagged yield from inside a
-- handler's own coroutine is forwarded up to the driver and the result passed
-- back down: handlers may use coroutines freely.

local host = ...

local co_create, co_resume, co_yield = coroutine.create, coroutine.resume, coroutine.yield
local co_status, co_close, co_isyieldable = coroutine.status, coroutine.close, coroutine.isyieldable
local type, select, error, pairs, next, tostring, setmetatable, getmetatable, rawget =
  type, select, error, pairs, next, tostring, setmetatable, getmetatable, rawget
local concat, sformat, math_type = table.concat, string.format, math.type

local raw_pcall, raw_xpcall, sethook = pcall, xpcall, debug.sethook

local PRELUDE = debug.getinfo(1, "S").source
local PRELUDE_SHORT = debug.getinfo(1, "S").short_src

-- "file:line: " of the first caller outside this prelude (for error messages)
local function where()
  for level = 3, 40 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.source ~= PRELUDE and info.what ~= "C" and info.currentline > 0 then
      return info.short_src .. ":" .. info.currentline .. ": "
    end
  end
  return ""
end

local TAG = setmetatable({}, { __name = "panto.request", __tostring = function() return "panto.request" end })

local panto = {}
local rt = {}  -- internals used by the Python side (not part of the API)

-- Lua values that Python keeps (handlers, activate functions, task bodies)
-- are anchored here and passed to Python as integer ids: Python then fetches
-- them through the main state, never holding an object that was created
-- inside a coroutine that may be gone by the time it is used.
local objects, next_id = {}, 0
local function anchor(v)
  next_id = next_id + 1
  objects[next_id] = v
  return next_id
end
rt.objects = objects

---------------------------------------------------------------------------
-- interrupts: a count hook in every coroutine asks the host whether the work
-- it belongs to was cancelled or ran past its deadline (see control.py)
---------------------------------------------------------------------------

local INTERRUPT = { __name = "panto.interrupt", __tostring = function(e) return e.message end }
local poll, HOOK_COUNT = host.poll, host.hook_count

local function count_hook()
  local msg = poll()
  if msg then error(setmetatable({ message = msg }, INTERRUPT), 0) end
end

-- arm the hook in the running coroutine (hooks are per coroutine)
local function arm() sethook(count_hook, "", HOOK_COUNT) end
rt.arm = arm

-- an interrupt cannot be swallowed: pcall, xpcall and coroutine.resume
-- raise it again
local function rethrow(ok, ...)
  if not ok and getmetatable((...)) == INTERRUPT then error((...), 0) end
  return ok, ...
end
function pcall(f, ...) return rethrow(raw_pcall(f, ...)) end
function xpcall(f, h, ...)
  return rethrow(raw_xpcall(f, function(e)
    if getmetatable(e) == INTERRUPT then return e end
    return h(e)
  end, ...))
end

---------------------------------------------------------------------------
-- coroutines: tagged yields pass through user coroutines
---------------------------------------------------------------------------

local function forward(co, ok, ...)
  if ok and (...) == TAG and co_status(co) == "suspended" then
    -- a panto request from inside a user coroutine: hand it to our own
    -- resumer (ultimately the Python driver) and pass the answer back down
    return forward(co, co_resume(co, co_yield(...)))
  end
  return rethrow(ok, ...)
end

function coroutine.create(f)
  return co_create(function(...)
    arm()
    return f(...)
  end)
end

function coroutine.resume(co, ...)
  return forward(co, co_resume(co, ...))
end

local function unwrap(co, ok, ...)
  if ok then return ... end
  local err = ...
  if co_status(co) == "dead" then co_close(co) end
  error(err, 0)
end

function coroutine.wrap(f)
  local co = coroutine.create(f)
  return function(...)
    return unwrap(co, coroutine.resume(co, ...))
  end
end

local function await(op, what)
  if not co_isyieldable() then
    error((what or "this call") .. " must run inside a coroutine (a tool handler, command, "
      .. "event handler or script); it cannot be called from a C boundary such as "
      .. "table.sort or string.gsub callbacks or require'd top-level code", 3)
  end
  return co_yield(TAG, op)
end

local function async(name, fn)
  return function(...)
    local ok, a, b = await(fn(...), name)
    if not ok then error(where() .. a, 0) end
    return a, b
  end
end

-- Host calls that run synchronously report failure as (nil, message).
local function sync(fn)
  return function(...)
    local ok, a, b = fn(...)
    if not ok then error(where() .. a, 0) end
    return a, b
  end
end

---------------------------------------------------------------------------
-- panto.json
---------------------------------------------------------------------------

local ARRAY = { __name = "panto.json.array" }
local OBJECT = { __name = "panto.json.object" }
local null = setmetatable({}, { __name = "panto.json.null", __tostring = function() return "null" end,
  __newindex = function() error("panto.json.null is read-only", 2) end })

local json = { null = null }

function json.array(t) return setmetatable(t or {}, ARRAY) end
function json.object(t) return setmetatable(t or {}, OBJECT) end
function json.is_array(t) return getmetatable(t) == ARRAY end

local escapes = {
  ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t',
}
local function escape_char(c)
  return escapes[c] or sformat("\\u%04x", c:byte())
end
local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', escape_char) .. '"'
end

local function is_sequence(t)
  local n = 0
  for k in pairs(t) do
    if math_type(k) ~= "integer" or k < 1 then return false end
    n = n + 1
  end
  for i = 1, n do
    if rawget(t, i) == nil then return false end
  end
  return true, n
end

local encode_value

local function encode_table(t, buf, depth, seen)
  if seen[t] then error("panto.json.encode: cycle in table", 0) end
  if depth > 200 then error("panto.json.encode: nesting too deep", 0) end
  seen[t] = true
  local mt = getmetatable(t)
  local as_array, n
  if mt == ARRAY then
    as_array, n = true, #t
  elseif mt == OBJECT or next(t) == nil then
    as_array = false
  else
    as_array, n = is_sequence(t)
  end
  if as_array then
    buf[#buf + 1] = "["
    for i = 1, n do
      if i > 1 then buf[#buf + 1] = "," end
      encode_value(t[i], buf, depth + 1, seen)
    end
    buf[#buf + 1] = "]"
  else
    buf[#buf + 1] = "{"
    local keys = {}
    for k in pairs(t) do
      local tk = type(k)
      if tk == "string" then keys[#keys + 1] = k
      elseif tk == "number" then keys[#keys + 1] = k
      else error("panto.json.encode: cannot encode a " .. tk .. " key", 0) end
    end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for i, k in ipairs(keys) do
      if i > 1 then buf[#buf + 1] = "," end
      buf[#buf + 1] = encode_string(tostring(k))
      buf[#buf + 1] = ":"
      encode_value(t[k], buf, depth + 1, seen)
    end
    buf[#buf + 1] = "}"
  end
  seen[t] = nil
end

encode_value = function(v, buf, depth, seen)
  local tv = type(v)
  if v == nil or v == null then
    buf[#buf + 1] = "null"
  elseif tv == "boolean" then
    buf[#buf + 1] = v and "true" or "false"
  elseif tv == "number" then
    if math_type(v) == "integer" then
      buf[#buf + 1] = sformat("%d", v)
    elseif v ~= v or v == math.huge or v == -math.huge then
      error("panto.json.encode: cannot encode " .. tostring(v), 0)
    else
      buf[#buf + 1] = sformat("%.17g", v)
    end
  elseif tv == "string" then
    buf[#buf + 1] = encode_string(v)
  elseif tv == "table" then
    encode_table(v, buf, depth, seen)
  else
    error("panto.json.encode: cannot encode a " .. tv, 0)
  end
end

function json.encode(v)
  local buf = {}
  encode_value(v, buf, 0, {})
  return concat(buf)
end

json.decode = sync(host.json_decode)

panto.json = json

---------------------------------------------------------------------------
-- errors and the call wrapper
---------------------------------------------------------------------------

local function error_message(e)
  if type(e) == "string" then return e end
  if type(e) == "table" then
    local mt = getmetatable(e)
    if mt and mt.__tostring then return tostring(e) end
    if e.message ~= nil then return tostring(e.message) end
    local ok, s = pcall(json.encode, e)
    if ok then return "error object: " .. s end
  end
  if e == nil then return "nil error" end
  return tostring(e)
end

local FAIL = { __name = "panto.failure", __tostring = function(e) return e.message end }

local function msgh(e)
  local mt = getmetatable(e)
  if mt == FAIL or mt == INTERRUPT then return e.message end
  local tb = debug.traceback("", 2):gsub("^\n", "")
  -- drop the frames of panto's own wrapper (xpcall and below)
  local cut = tb:find("\n\t%[C%]: in function 'xpcall'")
  if cut then tb = tb:sub(1, cut - 1) end
  local lines = {}
  for line in tb:gmatch("[^\n]+") do
    if not line:find(PRELUDE_SHORT, 1, true) and line ~= "\t[C]: in function 'error'"
      and line ~= "\t(...tail calls...)" then
      lines[#lines + 1] = line
    end
  end
  if #lines <= 1 then return error_message(e) end
  tb = concat(lines, "\n")
  return error_message(e) .. "\n" .. tb
end
rt.msgh = msgh

-- An expected failure: the message reaches the model as-is (no traceback).
function panto.fail(message)
  -- a caught error passed on ("…/std/bash.lua:28: No such file …"): the
  -- model needs no install path
  message = tostring(message):gsub("^[^%s:]+%.lua:%d+: ", "", 1)
  error(setmetatable({ message = message }, FAIL), 0)
end
rt.error_message = error_message

-- Run fn(...) under xpcall: returns true, results... or false, message+traceback.
function rt.run(fn, ...)
  arm()
  return raw_xpcall(fn, msgh, ...)
end

local function tool_result(r, e, ...)
  if r == nil then
    if e ~= nil then return error_message(e), true end
    return "", false
  end
  if r == false and e ~= nil then return error_message(e), true end
  local tr = type(r)
  if tr == "string" then return r, false end
  if tr == "table" then return json.encode(r), false end
  return tostring(r), false
end

-- A tool result with images: panto.tool_result{content = "...", is_error = false,
-- images = {{media_type = "image/png", data = <bytes>}, ...}}
local RESULT = { __name = "panto.tool_result" }
function panto.tool_result(t)
  if type(t) ~= "table" then error("panto.tool_result expects a table", 2) end
  local images = {}
  for i, im in ipairs(t.images or {}) do
    if type(im) ~= "table" or type(im.media_type) ~= "string" or type(im.data) ~= "string" then
      error("panto.tool_result: images[" .. i .. "] needs media_type and data strings", 2)
    end
    images[i] = { media_type = im.media_type, data_b64 = host.b64encode(im.data) }
  end
  return setmetatable({ content = tostring(t.content or ""), is_error = t.is_error == true,
    images = images }, RESULT)
end

local function finish_tool(r, ...)
  if type(r) == "table" and getmetatable(r) == RESULT then
    return r.content, r.is_error, json.array(r.images)
  end
  return tool_result(r, ...)
end

-- A tool's unexpected error (not panto.fail): the model gets the message
-- alone, without the "where.lua:12: " of an install path (that and the Lua
-- traceback are for panto's log, see rt.run_tool).
local function tool_msgh(e)
  local mt = getmetatable(e)
  if mt == FAIL or mt == INTERRUPT then return e.message end
  local message = error_message(e):gsub("^%[string \".-\"%]:%d+: ", "", 1)
    :gsub("^[^%s:]+:%d+: ", "", 1)
  return { message = message, traceback = msgh(e) }
end

-- Run a tool handler: returns content, is_error, images, and for an
-- unexpected error its full message with the traceback (never raises).
function rt.run_tool(handler, input, ctx)
  arm()
  local ok, content, is_error, images = raw_xpcall(function()
    return finish_tool(handler(input, ctx))
  end, tool_msgh)
  if not ok then
    if type(content) == "table" then return content.message, true, nil, content.traceback end
    return content, true
  end
  return content, is_error, images
end

function rt.close(co)
  return co_close(co)
end

rt.TAG = TAG
rt.null = null
function rt.mark_array(t) return setmetatable(t, ARRAY) end
function rt.mark_object(t) return setmetatable(t, OBJECT) end
-- "array", "object" or "null": how a Lua value maps to JSON / Python
function rt.kind(t)
  if t == null then return "null" end
  local mt = getmetatable(t)
  if mt == ARRAY then return "array" end
  if mt == OBJECT or next(t) == nil then return "object" end
  if is_sequence(t) then return "array" end
  return "object"
end
function rt.load(src, chunkname, env)
  if env == nil then return load(src, chunkname, "t") end
  return load(src, chunkname, "t", env)
end

---------------------------------------------------------------------------
-- batteries
---------------------------------------------------------------------------

panto.time = {
  sleep = async("panto.time.sleep", host.sleep),
  now = host.now,
  monotonic = host.monotonic,
}

panto.fs = {
  read = sync(host.fs_read),
  write = sync(host.fs_write),
  stat = sync(host.fs_stat),
  list = sync(host.fs_list),
  mkdir = sync(host.fs_mkdir),
  remove = sync(host.fs_remove),
  glob = sync(host.fs_glob),
  exists = function(p) return host.fs_stat(p) and true or false end,
}
-- fs.write of a large string hands it over in slices: converting it whole
-- would copy it once more (a 50 MB file would take 150 MB more)
do
  local SLICE = 1 << 20
  local write, wopen, wchunk, wclose = panto.fs.write, host.fs_write_open,
    host.fs_write_chunk, host.fs_write_close
  local function check(ok, v)
    if not ok then error(where() .. v, 0) end
    return v
  end
  panto.fs.write = function(path, data, opts)
    if type(data) ~= "string" or #data <= 4 * SLICE then return write(path, data, opts) end
    local id = check(wopen(path, opts))
    local ok, err = raw_pcall(function()
      for i = 1, #data, SLICE do
        check(wchunk(id, data:sub(i, i + SLICE - 1)))
        if i % (8 * SLICE) == 1 then collectgarbage("step", 0) end
      end
    end)
    if not ok then
      wclose(id, false)
      error(err, 0)
    end
    return check(wclose(id, true))
  end
end
-- fs.stat returns nil for a missing path rather than raising
do
  local stat = host.fs_stat
  panto.fs.stat = function(p)
    local ok, v = stat(p)
    if not ok then error(where() .. v, 0) end
    return v
  end
  panto.fs.exists = function(p)
    local ok, v = stat(p)
    return ok and v ~= nil
  end
end

-- a unified diff of two texts: panto.diff(old, new, {from=, to=, context=3})
panto.diff = sync(host.diff)

panto.process = {
  spawn = async("panto.process.spawn", host.spawn),
}

panto.http = {
  request = async("panto.http.request", host.http_request),
}
function panto.http.get(url, opts)
  opts = opts or {}
  opts.method, opts.url = "GET", url
  return panto.http.request(opts)
end

-- channel: a FIFO between coroutines; recv waits for a value.
local Channel = {}
Channel.__index = Channel
Channel.__name = "panto.channel"

local function wake(list)
  local w = table.remove(list, 1)
  if w then host.resolve(w) end
end

local function wait_on(list, what)
  local fut = host.future()
  list[#list + 1] = fut
  local ok, e = await(fut, what)
  if not ok then error(e, 3) end
end

function Channel:send(v)
  if self.closed then error("panto.channel: send on a closed channel", 2) end
  while self.capacity and #self.queue >= self.capacity do
    wait_on(self.senders, "panto.channel:send")
    if self.closed then error("panto.channel: send on a closed channel", 2) end
  end
  self.queue[#self.queue + 1] = { v }
  wake(self.waiters)
end

function Channel:recv()
  while #self.queue == 0 do
    if self.closed then return nil, false end
    wait_on(self.waiters, "panto.channel:recv")
  end
  local item = table.remove(self.queue, 1)
  wake(self.senders)
  return item[1], true
end

function Channel:close()
  self.closed = true
  while #self.waiters > 0 do wake(self.waiters) end
  while #self.senders > 0 do wake(self.senders) end
end

function Channel:__len() return #self.queue end

panto.channel = function(capacity)
  return setmetatable({ queue = {}, waiters = {}, senders = {}, capacity = capacity }, Channel)
end

-- spawn a concurrent task; returns a handle whose :wait() gives its results
local Task = {}
Task.__index = Task
function Task:wait()
  local ok, err = await(host.task_wait(self.handle), "task:wait")
  if not ok then error(err, 2) end
  local res = self.results
  return table.unpack(res, 1, res.n)
end
function Task:cancel() host.task_cancel(self.handle) end
function panto.spawn(fn, ...)
  local n, args = select("#", ...), { ... }
  local task = setmetatable({}, Task)
  local id = anchor(function()
    task.results = table.pack(fn(table.unpack(args, 1, n)))
  end)
  task.handle = host.task_spawn(id)
  return task
end

local function log_fn(level)
  return function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    host.log(level, concat(parts, " "))
  end
end
panto.log = {
  debug = log_fn("debug"), info = log_fn("info"), warn = log_fn("warning"),
  error = log_fn("error"),
}

---------------------------------------------------------------------------
-- read-only config view
---------------------------------------------------------------------------

local function readonly(t, path)
  if type(t) ~= "table" then return t end
  local cache = {}
  return setmetatable({}, {
    __name = "panto.config",
    __index = function(_, k)
      local v = t[k]
      if type(v) ~= "table" then return v end
      local c = cache[k]
      if not c then c = readonly(v, path .. "." .. tostring(k)); cache[k] = c end
      return c
    end,
    __newindex = function(_, k)
      error(path .. " is read-only (tried to set " .. tostring(k) .. ")", 2)
    end,
    __pairs = function()
      local self_ = nil
      return function(_, k)
        local nk, v = next(t, k)
        if type(v) == "table" then
          local c = cache[nk]
          if not c then c = readonly(v, path .. "." .. tostring(nk)); cache[nk] = c end
          v = c
        end
        return nk, v
      end, self_, nil
    end,
    __len = function() return #t end,
  })
end
rt.readonly = readonly

function rt.set_config(t)
  panto.config = readonly(t, "panto.config")
end
rt.set_config({})

---------------------------------------------------------------------------
-- extension API
---------------------------------------------------------------------------

local EVENTS = {
  session_start = true, user_message = true, before_tool_call = true,
  after_tool_call = true, turn_end = true, before_compact = true,
  before_request = true, after_response = true,
}

local function check_registration(what)
  local evaluating = host.evaluating()
  if evaluating then
    local full = what:find(".", 1, true) and ("panto." .. what) or ("panto.ext." .. what)
    error(full .. " called while evaluating " .. evaluating
      .. ": evaluation must only return entries; register inside activate()", 3)
  end
end

panto.ext = {}

function panto.ext.register_tool(spec)
  check_registration("register_tool")
  if type(spec) ~= "table" then error("register_tool expects a table", 2) end
  if type(spec.handler) ~= "function" then
    error("register_tool: 'handler' must be a function", 2)
  end
  local schema = spec.schema or spec.parameters or spec.input_schema
    or { type = "object", properties = json.object() }
  local ok, err = host.register_tool(spec.name, spec.description or "", json.encode(schema),
    anchor(spec.handler), spec.timeout)
  if not ok then error(err, 2) end
end

function panto.ext.register_command(spec)
  check_registration("register_command")
  if type(spec) ~= "table" or type(spec.handler) ~= "function" then
    error("register_command expects {name, description, handler}", 2)
  end
  local ok, err = host.register_command(spec.name, spec.description or "", anchor(spec.handler))
  if not ok then error(err, 2) end
end

function panto.ext.on(event, fn)
  check_registration("on")
  if not EVENTS[event] then
    local names = {}
    for k in pairs(EVENTS) do names[#names + 1] = k end
    table.sort(names)
    error("panto.ext.on: unknown event " .. tostring(event) .. " (known: "
      .. concat(names, ", ") .. ")", 2)
  end
  if type(fn) ~= "function" then error("panto.ext.on: handler must be a function", 2) end
  host.register_hook(event, anchor(fn))
end

panto.ext.events = EVENTS
panto.on = panto.ext.on

-- providers (panto.config.ext_providers): an HTTP provider on a wire whose
-- url/headers/key `prepare(req)` computes per request, or one whose
-- `stream(req, out)` produces the turn itself through `out`
panto.provider = {}

local function stream_runner(fn)
  return function(req, emit)
    local function add(ev) emit(ev) end
    local out = {
      text = function(s) add({ type = "text", text = tostring(s) }) end,
      thinking = function(s) add({ type = "thinking", text = tostring(s) }) end,
      tool_call = function(c)
        if type(c) ~= "table" or type(c.name) ~= "string" then
          error("out.tool_call expects {name, input, id?}", 2)
        end
        add({ type = "tool_call", name = c.name, id = c.id,
              input = c.input or json.object() })
      end,
      usage = function(u)
        u = u or {}
        add({ type = "usage", input_tokens = u.input_tokens or 0,
              output_tokens = u.output_tokens or 0 })
      end,
      stop = function(reason) add({ type = "stop", reason = reason or "stop" }) end,
    }
    fn(req, out)
  end
end

function panto.provider.register(spec)
  check_registration("provider.register")
  if type(spec) ~= "table" then
    error("panto.provider.register expects a table {name, wire, base_url, prepare} "
      .. "or {name, stream}", 2)
  end
  for _, k in ipairs({ "prepare", "stream" }) do
    if spec[k] ~= nil and type(spec[k]) ~= "function" then
      error("panto.provider.register: '" .. k .. "' must be a function", 2)
    end
  end
  local fields = { name = spec.name, wire = spec.wire, base_url = spec.base_url,
                   default_model = spec.default_model, timeout = spec.timeout }
  local ok, err = host.register_provider(fields,
    spec.prepare and anchor(spec.prepare) or nil,
    spec.stream and anchor(stream_runner(spec.stream)) or nil)
  if not ok then error(err, 2) end
end

-- a part of the system prompt: a string, or a function(info) returning one
-- (called each time the prompt is composed; info = {cwd, model, tools})
function panto.ext.system_prompt(part)
  check_registration("system_prompt")
  local tp = type(part)
  if tp == "string" then
    host.register_prompt(part, nil)
  elseif tp == "function" then
    host.register_prompt(nil, anchor(part))
  else
    error("panto.ext.system_prompt expects a string or a function returning one (got "
      .. tp .. ")", 2)
  end
end

-- Evaluate a loaded chunk and normalize its entries (one coroutine).
function rt.eval_entries(chunk, origin)
  return rt.entries(chunk(), origin)
end

-- Normalize what a source returned into a list of {name, activate}.
function rt.entries(ret, origin)
  if type(ret) ~= "table" then
    error(origin .. ": a source must return an entry {name, activate}, a list of entries, "
      .. "or a tool table with a handler (got " .. type(ret) .. ")", 0)
  end
  local list
  if ret.activate ~= nil or ret.handler ~= nil or ret.name ~= nil then
    list = { ret }
  else
    list = ret
  end
  local out, seen = {}, {}
  for i, e in ipairs(list) do
    if type(e) ~= "table" then error(origin .. ": entry " .. i .. " is not a table", 0) end
    local name, activate = e.name, e.activate
    if activate == nil and type(e.handler) == "function" then
      -- sugar: a bare tool table
      local tool = e
      name = e.entry or e.name
      activate = function() panto.ext.register_tool(tool) end
    end
    if type(name) ~= "string" or name == "" then
      error(origin .. ": entry " .. i .. " has no 'name'", 0)
    end
    if type(activate) ~= "function" then
      error(origin .. ": entry " .. name .. " has no 'activate' function", 0)
    end
    if seen[name] then error(origin .. ": entry name " .. name .. " appears twice", 0) end
    seen[name] = true
    out[#out + 1] = { name = name, id = anchor(activate) }
  end
  if #out == 0 then error(origin .. ": returned no entries", 0) end
  return out
end

---------------------------------------------------------------------------
-- blocking calls replaced
---------------------------------------------------------------------------

local function blocked(name, instead)
  return function()
    error(name .. " is not available in panto extensions (it would block every other "
      .. "coroutine): use " .. instead, 2)
  end
end
os.execute = blocked("os.execute", "panto.process.spawn{cmd=..., args={...}} or "
  .. "panto.process.spawn{shell='...'}")
io.popen = blocked("io.popen", "panto.process.spawn{cmd=..., args={...}} (its stdout, "
  .. "stderr and code come back in the result table)")
local real_exit = os.exit
os.exit = function()
  error("os.exit is not available in panto extensions (it would end panto itself)", 2)
end
rt.real_exit = real_exit

panto.version = host.version
_G.panto = panto
package.loaded.panto = panto
return rt

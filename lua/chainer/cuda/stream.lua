-- chainer.cuda's streams and events (Chainer's cuda.Stream, cuda.Event,
-- cuda.get_elapsed_time; CuPy's semantics), on runtime/cuda/stream.c.
--
-- Each device has a current stream (per host thread; the device's default
-- stream until `stream:use()` or `cuda.using_stream` picks another), and
-- every kernel, library call and copy of that device is queued on it.
-- Without a GPU every constructor and method fails with an error naming it
-- and saying why.
local lib = require 'chainer._lib'
local C, ffi, check = lib.C, lib.ffi, lib.check

local M = {}

local function cuda() return require 'chainer.cuda' end

-- Raises "<fn>: no CUDA device is available: <why>" without a GPU.
local function need_gpu(fn, level)
  if cuda().device_count() == 0 then
    error(string.format('%s: no CUDA device is available: %s', fn, cuda().info()), level + 1)
  end
end

local function need_bool(fn, name, v, level)
  if v ~= nil and type(v) ~= 'boolean' then
    error(string.format('%s: %s must be a boolean (got %s)', fn, name, type(v)), level + 1)
  end
  return v == true
end

---------------------------------------------------------------------------
-- Stream
---------------------------------------------------------------------------
local Stream = {}
M.Stream = Stream

local stream_methods = {}

-- The device a stream works on: its own, or (the null stream) the current one.
local function device_of(s)
  return s.device_id or cuda().get_current_device_id()
end

local function is_stream(s) return getmetatable(s) == Stream end
M.is_stream = is_stream

Stream.__index = function(s, k)
  if k == 'done' then
    need_gpu('Stream.done', 2)
    local done = ffi.new('int[1]')
    check(C.ch_cuda_stream_query(device_of(s), s.handle, done), 2)
    return done[0] ~= 0
  elseif k == 'ptr' then
    -- the native cudaStream_t as a number (0: the default stream), as CuPy's
    return s.handle ~= nil and tonumber(ffi.cast('intptr_t', C.ch_cuda_stream_native(s.handle))) or 0
  end
  return stream_methods[k]
end

function Stream.__tostring(s)
  if s.handle == nil then return 'Stream(null)' end
  return string.format('Stream(cuda:%d%s)', s.device_id, s.non_blocking and ', non_blocking' or '')
end

-- the same stream (every null stream is the default stream)
function Stream.__eq(a, b) return a.handle == b.handle end

-- Stream(null = false, non_blocking = false): a new stream on the current
-- device, or (null) the default stream of whichever device is current.
local function new_stream(null, non_blocking)
  null = need_bool('Stream', 'null', null, 3)
  non_blocking = need_bool('Stream', 'non_blocking', non_blocking, 3)
  if null then return setmetatable({ null = true }, Stream) end
  need_gpu('Stream', 3)
  local id = cuda().get_current_device_id()
  local out = ffi.new('ch_cuda_stream*[1]')
  check(C.ch_cuda_stream_create(id, non_blocking and 1 or 0, out), 3)
  local handle = ffi.gc(out[0], C.ch_cuda_stream_free)
  return setmetatable({ handle = handle, device_id = id, non_blocking = non_blocking, null = false }, Stream)
end

setmetatable(Stream, { __call = function(_, null, non_blocking) return new_stream(null, non_blocking) end })

-- CuPy's Stream.null: the default stream (of the current device when used).
Stream.null = setmetatable({ null = true }, Stream)

-- The Lua objects of the current non-default streams, so that a stream in
-- use is never collected.
local in_use = {}

-- Makes the stream current for its device (the null stream: the current
-- device goes back to its default stream); returns it.
function stream_methods.use(s)
  need_gpu('Stream.use', 2)
  local id = device_of(s)
  check(C.ch_cuda_stream_use(id, s.handle), 2)
  in_use[id] = s.handle ~= nil and s or nil
  return s
end

function stream_methods.synchronize(s)
  need_gpu('Stream.synchronize', 2)
  check(C.ch_cuda_stream_synchronize(device_of(s), s.handle), 2)
end

-- record(event = a new Event of the stream's device): records `event` on
-- this stream; returns it.
function stream_methods.record(s, event)
  need_gpu('Stream.record', 2)
  local id = device_of(s)
  if event == nil then
    event = M.new_event(id, false, false, false, 2)
  elseif not M.is_event(event) then
    error('Stream.record: event must be a cuda.Event (got ' .. type(event) .. ')', 2)
  end
  if event.device_id ~= id then
    error(string.format('Stream.record: the event belongs to cuda:%d but the stream works on cuda:%d',
      event.device_id, id), 2)
  end
  check(C.ch_cuda_event_record(event.handle, s.handle), 2)
  return event
end

-- Work queued on this stream from now waits until `event` has happened.
function stream_methods.wait_event(s, event)
  need_gpu('Stream.wait_event', 2)
  if not M.is_event(event) then
    error('Stream.wait_event: event must be a cuda.Event (got ' .. type(event) .. ')', 2)
  end
  check(C.ch_cuda_stream_wait_event(device_of(s), s.handle, event.handle), 2)
end

-- The current stream of the current device (Stream.null when it is the
-- default one), as CuPy's get_current_stream.
function M.get_current_stream()
  need_gpu('get_current_stream', 2)
  local id = cuda().get_current_device_id()
  return in_use[id] or Stream.null
end

-- using_stream(stream, fn): runs fn with `stream` current on its device,
-- then restores the device's previous stream (also when fn raises);
-- returns what fn returns.  (Lua's form of CuPy's `with stream:`.)
local function restore(id, old, ok, ...)
  check(C.ch_cuda_stream_use(id, old and old.handle or nil), 2)
  in_use[id] = old
  if not ok then error((...), 0) end
  return ...
end

-- The same on device `id` (the null stream: that device's default stream).
function M.with_stream(id, stream, fn)
  local old = in_use[id]
  check(C.ch_cuda_stream_use(id, stream.handle), 2)
  in_use[id] = stream.handle ~= nil and stream or nil
  return restore(id, old, pcall(fn))
end

function M.using_stream(stream, fn)
  if not is_stream(stream) then
    error('using_stream: stream must be a cuda.Stream (got ' .. type(stream) .. ')', 2)
  end
  if type(fn) ~= 'function' then
    error('using_stream: pass the scope as a function: cuda.using_stream(stream, function() ... end)', 2)
  end
  need_gpu('using_stream', 2)
  return M.with_stream(device_of(stream), stream, fn)
end

---------------------------------------------------------------------------
-- Event
---------------------------------------------------------------------------
local Event = {}
M.Event = Event
local event_methods = {}

function M.is_event(e) return getmetatable(e) == Event end

Event.__index = function(e, k)
  if k == 'done' then
    local done = ffi.new('int[1]')
    check(C.ch_cuda_event_query(e.handle, done), 2)
    return done[0] ~= 0
  end
  return event_methods[k]
end

function Event.__tostring(e)
  return string.format('Event(cuda:%d%s)', e.device_id, e.disable_timing and ', disable_timing' or '')
end

-- An event of device `id` (errors raised `level` above the caller).
function M.new_event(id, block, disable_timing, interprocess, level)
  local out = ffi.new('ch_cuda_event*[1]')
  check(C.ch_cuda_event_create(id, block and 1 or 0, disable_timing and 1 or 0, interprocess and 1 or 0, out),
    level + 1)
  return setmetatable({ handle = ffi.gc(out[0], C.ch_cuda_event_free), device_id = id, block = block,
    disable_timing = disable_timing, interprocess = interprocess }, Event)
end

-- Event(block = false, disable_timing = false, interprocess = false): an
-- event of the current device; interprocess needs disable_timing.
local function new_event(block, disable_timing, interprocess)
  block = need_bool('Event', 'block', block, 3)
  disable_timing = need_bool('Event', 'disable_timing', disable_timing, 3)
  interprocess = need_bool('Event', 'interprocess', interprocess, 3)
  if interprocess and not disable_timing then
    error('Event: an interprocess event must be created with disable_timing = true', 3)
  end
  need_gpu('Event', 3)
  return M.new_event(cuda().get_current_device_id(), block, disable_timing, interprocess, 3)
end

setmetatable(Event, { __call = function(_, ...) return new_event(...) end })

-- record(stream = the current stream of the event's device).
function event_methods.record(e, stream)
  if stream == nil then
    check(C.ch_cuda_event_record(e.handle, C.ch_cuda_stream_current(e.device_id)), 2)
    return
  end
  if not is_stream(stream) then
    error('Event.record: stream must be a cuda.Stream (got ' .. type(stream) .. ')', 2)
  end
  if stream.handle ~= nil and stream.device_id ~= e.device_id then
    error(string.format('Event.record: the stream works on cuda:%d but the event belongs to cuda:%d',
      stream.device_id, e.device_id), 2)
  end
  check(C.ch_cuda_event_record(e.handle, stream.handle), 2)
end

function event_methods.synchronize(e)
  check(C.ch_cuda_event_synchronize(e.handle), 2)
end

-- get_elapsed_time(start_event, end_event): milliseconds between them
-- (both recorded, timing enabled, end completed).
function M.get_elapsed_time(start_event, end_event)
  if not M.is_event(start_event) or not M.is_event(end_event) then
    error(string.format('get_elapsed_time: start_event and end_event must be cuda.Event objects (got %s and %s)',
      type(start_event), type(end_event)), 2)
  end
  local ms = ffi.new('float[1]')
  check(C.ch_cuda_event_elapsed(start_event.handle, end_event.handle, ms), 2)
  return tonumber(ms[0])
end

return M

-- The Lua side of chainer.cuda's streams and events (chainer/cuda/stream.lua)
-- with a GPU, on any machine: the module is loaded against a stand-in for
-- the C API that keeps the current stream per device and orders events by a
-- counter, so the Lua bookkeeping (which stream is current, what a scope
-- restores, which device an event and a stream belong to, the checks before
-- the C calls) runs here.  The C side is tested emulated
-- (tests/cuda/test_stream.cu) and on a GPU (stream_gpu_spec.lua).
local ffi = require 'ffi'
require 'chainer.tensor' -- the real library for everything else, loaded first
local real_lib = require 'chainer._lib'

-- A stand-in C API with two devices.
local function fake_c()
  local F = { current = {}, uses = {}, clock = 0, next_ptr = 16, failed = nil }
  local function ptr(ct)
    F.next_ptr = F.next_ptr + 16
    return ffi.cast(ct, F.next_ptr)
  end
  local device_of, events = {}, {}
  local C = setmetatable({}, { __index = real_lib.C })
  function C.ch_cuda_load() return 2 end
  function C.ch_cuda_stream_create(id, nb, out)
    out[0] = ptr('ch_cuda_stream*')
    device_of[tonumber(ffi.cast('intptr_t', out[0]))] = id
    return 0
  end
  function C.ch_cuda_stream_free() end
  function C.ch_cuda_stream_native(h) return ffi.cast('void*', h) end
  local function key(h) return h == nil and 0 or tonumber(ffi.cast('intptr_t', h)) end
  function C.ch_cuda_stream_use(id, h)
    if h ~= nil and device_of[key(h)] ~= id then F.failed = 'stream of another device' return 1 end
    F.current[id] = key(h)
    F.uses[#F.uses + 1] = id .. ':' .. key(h)
    return 0
  end
  function C.ch_cuda_stream_current(id)
    local k = F.current[id] or 0
    return k ~= 0 and ffi.cast('ch_cuda_stream*', k) or nil
  end
  function C.ch_cuda_stream_synchronize() return 0 end
  function C.ch_cuda_stream_query(_, _, done) done[0] = 1 return 0 end
  function C.ch_cuda_stream_wait_event(_, _, e) return events[key(e)].recorded and 0 or 1 end
  function C.ch_cuda_event_create(id, _, _, _, out)
    out[0] = ptr('ch_cuda_event*')
    events[key(out[0])] = { device = id }
    return 0
  end
  function C.ch_cuda_event_free() end
  function C.ch_cuda_event_record(e, s)
    F.clock = F.clock + 1
    local ev = events[key(e)]
    ev.recorded, ev.at, ev.on = true, F.clock, key(s)
    return 0
  end
  function C.ch_cuda_event_synchronize() return 0 end
  function C.ch_cuda_event_query(_, done) done[0] = 1 return 0 end
  function C.ch_cuda_event_elapsed(a, b, ms)
    ms[0] = events[key(b)].at - events[key(a)].at
    return 0
  end
  F.C, F.events, F.key = C, events, key
  return F
end

describe('cuda streams (Lua side, against a stand-in C API)', function()
  local saved, F, cuda, S = {}, nil, nil, nil
  -- fresh copies of these see the stand-in; the real ones are put back after
  local MODULES = { 'chainer._lib', 'chainer.cuda', 'chainer.cuda.stream', 'chainer.backend' }

  before_each(function()
    for _, m in ipairs(MODULES) do saved[m] = package.loaded[m] end
    F = fake_c()
    package.loaded['chainer._lib'] = { C = F.C, ffi = ffi, check = function(st, level)
      if st ~= 0 then error('fake C failure: ' .. tostring(F.failed), (level or 1) + 1) end
    end }
    package.loaded['chainer.cuda'], package.loaded['chainer.cuda.stream'] = nil, nil
    package.loaded['chainer.backend'] = nil
    cuda = require 'chainer.cuda'
    S = require 'chainer.cuda.stream'
  end)

  after_each(function()
    for _, m in ipairs(MODULES) do package.loaded[m] = saved[m] end
  end)

  it('makes a stream current, and a scope restores the previous one', function()
    local s, t = cuda.Stream(), cuda.Stream(false, true)
    assert.are.equal(0, s.device_id)
    assert.is_true(t.non_blocking)
    assert.are.equal(cuda.Stream.null, cuda.get_current_stream())
    local seen = {}
    local r1, r2 = cuda.using_stream(s, function()
      seen[1] = cuda.get_current_stream()
      cuda.using_stream(t, function() seen[2] = cuda.get_current_stream() end)
      seen[3] = cuda.get_current_stream()
      return 'a', 'b'
    end)
    assert.are.equal('a', r1)
    assert.are.equal('b', r2)
    assert.are.equal(s, seen[1])
    assert.are.equal(t, seen[2])
    assert.are.equal(s, seen[3])
    assert.are.equal(cuda.Stream.null, cuda.get_current_stream())
    assert.are.equal(0, F.current[0])
    -- a raising scope restores too, and its error comes through
    local ok, err = pcall(cuda.using_stream, s, function() error('inner failure', 0) end)
    assert.is_false(ok)
    assert.are.equal('inner failure', err)
    assert.are.equal(0, F.current[0])
    -- use() stays until another use()
    s:use()
    assert.are.equal(s, cuda.get_current_stream())
    assert.are.equal(F.key(s.handle), F.current[0])
    cuda.Stream.null:use()
    assert.are.equal(cuda.Stream.null, cuda.get_current_stream())
    assert.are.equal(0, F.current[0])
  end)

  it('keeps the streams of each device apart', function()
    cuda.get_device_from_id(1):use()
    local s1 = cuda.Stream()
    assert.are.equal(1, s1.device_id)
    cuda.get_device_from_id(0):use()
    cuda.using_stream(s1, function()
      -- s1 is current on cuda:1; cuda:0 keeps its default stream
      assert.are.equal(F.key(s1.handle), F.current[1])
      assert.is_nil(F.current[0])
      assert.are.equal(cuda.Stream.null, cuda.get_current_stream())
    end)
    assert.are.equal(0, F.current[1])
  end)

  it('records events on the stream and device they belong to', function()
    local s = cuda.Stream()
    local start = s:record()
    assert.is_true(S.is_event(start))
    assert.are.equal(0, start.device_id)
    assert.are.equal(F.key(s.handle), F.events[F.key(start.handle)].on)
    local stop = cuda.Event()
    s:use()
    stop:record() -- the current stream of the event's device
    assert.are.equal(F.key(s.handle), F.events[F.key(stop.handle)].on)
    cuda.Stream.null:use()
    assert.are.equal(1, cuda.get_elapsed_time(start, stop))
    s:wait_event(stop)
    assert.is_true(s.done and stop.done)
    -- a stream of cuda:1 makes its own events there
    cuda.get_device_from_id(1):use()
    local s1 = cuda.Stream()
    cuda.get_device_from_id(0):use()
    local e1 = s1:record()
    assert.are.equal(1, e1.device_id)
    assert.has_error(function() s1:record(start) end,
      'Stream.record: the event belongs to cuda:0 but the stream works on cuda:1')
    assert.has_error(function() start:record(s1) end,
      'Event.record: the stream works on cuda:1 but the event belongs to cuda:0')
    assert.has_error(function() s:wait_event('e') end, 'Stream.wait_event: event must be a cuda.Event (got string)')
  end)

  it('runs to_gpu and to_cpu on the stream of the target device', function()
    cuda.get_device_from_id(1):use()
    local s1 = cuda.Stream()
    cuda.get_device_from_id(0):use()
    assert.has_error(function() cuda.to_gpu(nil, 0, s1) end,
      'to_gpu: the stream works on cuda:1 but the array goes to or comes from cuda:0')
    -- (nil is sent as nil) the stream is current during the send and restored after
    F.uses = {}
    assert.is_nil(cuda.to_gpu(nil, nil, s1))
    assert.are.same({ '1:' .. F.key(s1.handle), '1:0' }, F.uses)
    F.uses = {}
    assert.is_nil(cuda.to_cpu(nil, cuda.Stream.null))
    assert.are.same({ '0:0', '0:0' }, F.uses)
  end)
end)

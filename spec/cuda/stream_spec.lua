-- chainer.cuda's streams, events, pinned pool and workspace limit on any
-- machine: the argument checks, and without a GPU (this project's CI) a
-- clear error from every function that needs one, naming it and saying why.
-- What they do on a GPU: spec/cuda/stream_gpu_spec.lua (tag gpu).
local T = require 'chainer.tensor'
local cuda = require 'chainer.cuda'
local chainer = require 'chainer'
local lib = require 'chainer._lib'
local errors_with = require('helpers').errors_with
local C, ffi = lib.C, lib.ffi

describe('cuda streams and events', function()
  it('are chainer.backends.cuda names', function()
    local B = chainer.backends.cuda
    for _, name in ipairs { 'Stream', 'Event', 'get_elapsed_time', 'using_stream', 'get_current_stream',
      'get_max_workspace_size', 'set_max_workspace_size', 'pinned_memory_pool' } do
      assert.is_not_nil(B[name], name)
    end
    assert.are.equal(cuda.Stream, B.Stream)
  end)

  it('check their arguments before looking for a GPU', function()
    errors_with(function() cuda.Stream(1) end, 'Stream: null must be a boolean (got number)')
    errors_with(function() cuda.Stream(false, 'yes') end, 'Stream: non_blocking must be a boolean (got string)')
    errors_with(function() cuda.Event(nil, 0) end, 'Event: disable_timing must be a boolean (got number)')
    errors_with(function() cuda.Event(false, false, true) end,
      'Event: an interprocess event must be created with disable_timing = true')
    errors_with(function() cuda.using_stream({}, function() end) end,
      'using_stream: stream must be a cuda.Stream (got table)')
    errors_with(function() cuda.using_stream(cuda.Stream.null) end,
      'using_stream: pass the scope as a function')
    errors_with(function() cuda.get_elapsed_time(1, 2) end,
      'get_elapsed_time: start_event and end_event must be cuda.Event objects (got number and number)')
    errors_with(function() cuda.to_cpu(T.ones { 2 }, 'stream') end,
      'to_cpu: stream must be a cuda.Stream or nil (got string)')
    errors_with(function() cuda.to_gpu(T.ones { 2 }, 0, {}) end, 'to_gpu: stream must be a cuda.Stream or nil (got table)')
  end)

  it('have a null stream without a GPU', function()
    local s = cuda.Stream.null
    assert.is_true(s.null)
    assert.are.equal(0, s.ptr)
    assert.are.equal('Stream(null)', tostring(s))
    assert.are.equal(s, cuda.Stream(true))
  end)

  describe('without a GPU', function()
    if cuda.available then
      it('(a GPU is present)', function() pending('a GPU is present: spec/cuda/stream_gpu_spec.lua checks it') end)
      return
    end
    local why = 'no CUDA device is available'

    it('every function needing one fails naming it and saying why', function()
      errors_with(function() cuda.Stream() end, 'Stream: ' .. why)
      errors_with(function() cuda.Stream(false, true) end, 'Stream: ' .. why)
      errors_with(function() cuda.Event() end, 'Event: ' .. why)
      errors_with(function() cuda.Event(true, true, true) end, 'Event: ' .. why)
      local null = cuda.Stream.null
      errors_with(function() null:use() end, 'Stream.use: ' .. why)
      errors_with(function() null:synchronize() end, 'Stream.synchronize: ' .. why)
      errors_with(function() return null.done end, 'Stream.done: ' .. why)
      errors_with(function() null:record() end, 'Stream.record: ' .. why)
      errors_with(function() null:wait_event({}) end, 'Stream.wait_event: ' .. why)
      errors_with(function() cuda.using_stream(null, function() end) end, 'using_stream: ' .. why)
      errors_with(function() cuda.get_current_stream() end, 'get_current_stream: ' .. why)
      errors_with(function() cuda.to_gpu(T.ones { 2 }, nil, null) end, 'to_gpu: ' .. why)
      errors_with(function() cuda.to_cpu(T.ones { 2 }, null) end,
        'to_cpu: a stream was given but ' .. why)
      errors_with(function() cuda.pinned_memory_pool(0) end, 'pinned_memory_pool: cuda:0 requested but no GPU')
    end)

    it('to_cpu without a stream still works on host tensors', function()
      local x = T.ones { 2 }
      assert.are.equal(x, cuda.to_cpu(x))
    end)

    it('the pinned pool is empty', function()
      local pool = cuda.pinned_memory_pool()
      assert.are.equal(0, pool:total_bytes())
      assert.are.equal(0, pool:n_free_blocks())
      assert.has_no.errors(function() pool:free_all_blocks() end)
      assert.are.equal(0, cuda.memory_pool():pinned_bytes())
    end)

    it('the C API fails with the reason, naming the function', function()
      local out = ffi.new('ch_cuda_stream*[1]')
      assert.are_not.equal(0, C.ch_cuda_stream_create(0, 0, out))
      assert.matches('^Stream: the CUDA backend is not available', ffi.string(C.ch_last_error()))
      local ev = ffi.new('ch_cuda_event*[1]')
      assert.are_not.equal(0, C.ch_cuda_event_create(0, 0, 0, 0, ev))
      assert.matches('^Event: the CUDA backend is not available', ffi.string(C.ch_last_error()))
      assert.are_not.equal(0, C.ch_cuda_stream_synchronize(0, nil))
      assert.matches('^Stream.synchronize: ', ffi.string(C.ch_last_error()))
      assert.are_not.equal(0, C.ch_cuda_stream_use(0, nil))
      assert.matches('^Stream.use: ', ffi.string(C.ch_last_error()))
      assert.is_true(C.ch_cuda_stream_current(0) == nil)
      local ms = ffi.new('float[1]')
      assert.are_not.equal(0, C.ch_cuda_event_elapsed(nil, nil, ms))
      assert.matches('^get_elapsed_time: the start event is NULL', ffi.string(C.ch_last_error()))
      assert.are.equal(0, tonumber(C.ch_cuda_pinned_bytes(0)))
      C.ch_clear_error()
    end)
  end)
end)

describe('cuda.get_max_workspace_size / set_max_workspace_size', function()
  local saved
  before_each(function() saved = cuda.get_max_workspace_size() end)
  after_each(function() cuda.set_max_workspace_size(saved) end)

  it("start at Chainer's 8 MiB and keep what is set, with or without a GPU", function()
    assert.are.equal(8 * 1024 * 1024, saved)
    cuda.set_max_workspace_size(1024)
    assert.are.equal(1024, cuda.get_max_workspace_size())
    assert.are.equal(1024, tonumber(C.ch_get_cudnn_workspace_limit()))
    cuda.set_max_workspace_size(0)
    assert.are.equal(0, cuda.get_max_workspace_size())
    cuda.set_max_workspace_size(2 ^ 40)
    assert.are.equal(2 ^ 40, cuda.get_max_workspace_size())
  end)

  it('refuse a size that is not a non-negative integer', function()
    for _, bad in ipairs { -1, 1.5, 'big', true } do
      errors_with(function() cuda.set_max_workspace_size(bad) end,
        'set_max_workspace_size: size must be a non-negative integer number of bytes (got ' .. tostring(bad))
    end
    assert.are.equal(saved, cuda.get_max_workspace_size())
  end)

  it('the CPU convolution ignores the limit', function()
    local F = chainer.functions
    local x = T.random.uniform(-1, 1, { 1, 2, 5, 5 })
    local W = T.random.uniform(-1, 1, { 3, 2, 3, 3 })
    local y1 = F.convolution_2d(x, W).array
    cuda.set_max_workspace_size(0)
    local y2 = F.convolution_2d(x, W).array
    assert.are.same(y1:tolist(), y2:tolist())
  end)
end)

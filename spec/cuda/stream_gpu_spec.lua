-- Streams, events, pinned transfers and the cuDNN workspace limit on a real
-- GPU (issue 15): copies and kernels queued on a non-default (non-blocking)
-- stream run in order; an event recorded around work measures a positive
-- time; wait_event orders two streams; to_gpu/to_cpu through the pinned
-- staging buffers give back every dtype's bits, also for tensors longer
-- than one staging buffer (4 MiB); convolutions under a workspace limit of
-- 0 and of 1 GiB agree with the CPU.  Tagged `gpu`; without a GPU it
-- reports one pending line.  The errors without a GPU: stream_spec.lua.
--
-- NOTE: written without access to a GPU and not yet run on one; checked by
-- reading and by loading it here.
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local chainer = require 'chainer'
local cuda = require 'chainer.cuda'
local H = require 'cuda.helpers'

local DTYPES = { 'bool', 'int8', 'uint8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64' }

-- Asserts two CPU tensors have the same bits, naming the first differing element.
local function same_bits(a, b, what)
  assert.are.equal('cpu', b.device, what)
  assert.are.same(a.shape, b.shape, what)
  assert.are.equal(a.dtype, b.dtype, what)
  local x, y = H.bytes(a), H.bytes(b)
  if x ~= y then
    local z = a.itemsize
    for i = 1, #x, z do
      if x:sub(i, i + z - 1) ~= y:sub(i, i + z - 1) then
        error(string.format('%s: element %d of %d differs (%s %s)', what, (i - 1) / z, a.size, a.dtype,
          table.concat(a.shape, 'x')), 2)
      end
    end
  end
end

describe('cuda streams on a GPU #gpu', function()
  if H.without_gpu('stream') then return end

  after_each(function()
    cuda.Stream.null:use()
    cuda.synchronize()
  end)

  it('creates streams and events of the current device', function()
    local s = cuda.Stream()
    local nb = cuda.Stream(false, true)
    assert.is_false(s.null)
    assert.is_true(nb.non_blocking)
    assert.is_true(s.ptr ~= 0 and nb.ptr ~= 0 and s.ptr ~= nb.ptr)
    assert.are.equal(0, cuda.Stream.null.ptr)
    assert.is_true(s.done)
    s:synchronize()
    local e = cuda.Event()
    assert.is_true(e.done) -- never recorded
    assert.has_no.errors(function() cuda.Event(true, true, true) end)
    assert.are.equal(cuda.Stream.null, cuda.get_current_stream())
    cuda.using_stream(s, function()
      assert.are.equal(s, cuda.get_current_stream())
    end)
    assert.are.equal(cuda.Stream.null, cuda.get_current_stream())
    -- a scope that raises still restores the stream
    assert.has_error(function() cuda.using_stream(nb, function() error('boom') end) end)
    assert.are.equal(cuda.Stream.null, cuda.get_current_stream())
  end)

  it('runs copies and kernels in order on a non-blocking stream', function()
    local s = cuda.Stream(false, true)
    local n = 3 * 1024 * 1024 -- 12 MiB of float32: three staging chunks
    local x = T.arange(n, 'float32')
    local want = n * n -- the sum of the first n odd numbers, exact in float64
    local got, back
    cuda.using_stream(s, function()
      for _ = 1, 3 do
        local g = cuda.to_gpu(x)           -- queued upload
        local y = g * 2 + 1                -- kernels on s
        got = y:astype('float64'):sum():to_cpu():item() -- download on s, returns with the data
        back = cuda.to_cpu(y)
      end
    end)
    assert.are.equal(want, got)
    same_bits(x * 2 + 1, back, 'x * 2 + 1 on a non-blocking stream')
    assert.is_true(s.done)
  end)

  it('takes the stream argument of to_gpu, to_cpu and cuda.copy', function()
    local s = cuda.Stream(false, true)
    local x = H.rand('float64', { 300, 200 })
    local g = cuda.to_gpu(x, 0, s)
    local c = cuda.copy(g, { stream = s })
    local back = cuda.to_cpu(c, s)
    same_bits(x, back, 'to_gpu / copy / to_cpu on a stream')
    -- the null stream is the default stream of the array's device
    same_bits(x, cuda.to_cpu(cuda.to_gpu(x, 0, cuda.Stream.null), cuda.Stream.null), 'on Stream.null')
    assert.has_error(function() cuda.to_gpu(x, 0, 'stream') end,
      'to_gpu: stream must be a cuda.Stream or nil (got string)')
  end)

  it('measures a positive elapsed time between two events', function()
    local s = cuda.Stream()
    local a = H.rand('float32', { 1024, 1024 }):to_gpu()
    local start = s:record()
    cuda.using_stream(s, function()
      for _ = 1, 10 do a = T.matmul(a, a) * 1e-3 end
    end)
    local stop = cuda.Event()
    stop:record(s)
    stop:synchronize()
    assert.is_true(stop.done)
    local ms = cuda.get_elapsed_time(start, stop)
    assert.is_true(ms > 0, 'elapsed ' .. tostring(ms) .. ' ms')
    local untimed = cuda.Event(false, true)
    untimed:record(s)
    untimed:synchronize()
    assert.has_error(function() cuda.get_elapsed_time(start, untimed) end)
  end)

  it('orders two streams with wait_event', function()
    local s1, s2 = cuda.Stream(false, true), cuda.Stream(false, true)
    local x = T.arange(1048576, 'float64')
    local g, y
    cuda.using_stream(s1, function()
      g = cuda.to_gpu(x)
      for _ = 1, 20 do g = g + 1 end
    end)
    local e = s1:record()
    s2:wait_event(e)
    cuda.using_stream(s2, function() y = cuda.to_cpu(g * 2) end)
    same_bits((x + 20) * 2, y, 'the second stream after the first')
  end)

  it('round-trips every dtype through the pinned buffers, short and long', function()
    local pool = cuda.pinned_memory_pool()
    -- longer than one 4 MiB staging buffer: a few dtypes (1, 2 and 8 bytes)
    local LONG = { int8 = true, float16 = true, float64 = true }
    for _, dt in ipairs(DTYPES) do
      for _, n in ipairs { 1, 1000, LONG[dt] and 5 * 1024 * 1024 + 7 or nil } do
        local x = H.rand(dt, { n })
        local g = cuda.to_gpu(x)
        same_bits(x, cuda.to_cpu(g), string.format('%s[%d] round trip', dt, n))
        -- strided on both sides (packed on the host, scattered by a kernel)
        local xs = H.rand(dt, { n, 2 }):transpose()
        same_bits(xs:copy(), cuda.to_cpu(cuda.to_gpu(xs)), string.format('%s[%d] strided', dt, n))
      end
    end
    assert.is_true(pool:total_bytes() > 0)
    assert.is_true(cuda.memory_pool():pinned_bytes() == pool:total_bytes())
    pool:free_all_blocks()
    assert.are.equal(0, pool:total_bytes())
    assert.are.equal(0, pool:n_free_blocks())
  end)

  it('convolves under any workspace limit, agreeing with the CPU', function()
    local saved = cuda.get_max_workspace_size()
    local x = H.rand('float32', { 4, 8, 33, 33 })
    local W = H.rand('float32', { 16, 8, 5, 5 })
    local want = F.convolution_2d(x, W, nil, 1, 2).array
    for _, limit in ipairs { 0, 1024, 2 ^ 30 } do
      cuda.set_max_workspace_size(limit)
      chainer.using_config('use_cudnn_tensor_core', 'never', function()
        local xv = chainer.Variable(x:to_gpu())
        local y = F.convolution_2d(xv, W:to_gpu(), nil, 1, 2)
        H.agree(y.array, want, 'convolution_2d under workspace limit ' .. limit, 10)
        F.sum(y):backward()
        assert.are.equal(H.dev, xv.grad.device)
      end)
    end
    cuda.set_max_workspace_size(saved)
  end)
  it('ConcatWithAsyncTransfer gives concat_examples on the GPU, with and without a compute stream', function()
    local DS = require 'chainer.dataset'
    local batch = {}
    for i = 1, 6 do batch[i] = { H.rand('float32', { 3, 5 }), i % 3 } end
    local want = DS.concat_examples(batch, -1)
    for _, compute in ipairs { false, true } do
      local cs = compute and cuda.Stream(false, true) or nil
      local conv = DS.ConcatWithAsyncTransfer(nil, cs)
      for _ = 1, 3 do
        local got = conv(batch, 0)
        if cs then cs:synchronize() end
        H.agree(got[1], want[1], 'ConcatWithAsyncTransfer field 1', 1, true)
        H.agree(got[2], want[2], 'ConcatWithAsyncTransfer field 2', 1, true)
      end
      assert.has_error(function() conv(batch, -1) end)
    end
  end)
end)

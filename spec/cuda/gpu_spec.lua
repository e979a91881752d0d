-- The CUDA backend on a real GPU: transfers, casts, strided copies, fill and
-- the caching allocator.  Tagged `gpu`: scripts/run-tests excludes it when
-- chainer.cuda.available is false.  Every GPU result is compared with the
-- CPU's result for the same input (bit for bit), the CPU being the reference.
local T = require 'chainer.tensor'
local cuda = require 'chainer.cuda'
local lib = require 'chainer._lib'
local C, ffi = lib.C, lib.ffi

local DTYPES = { 'bool', 'int8', 'uint8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64' }

-- The bytes of a CPU tensor in C order.
local function bytes(t)
  assert.are.equal('cpu', t.device)
  local c = t:contiguous()
  return ffi.string(C.ch_tensor_ptr(c.ptr), c.nbytes)
end

-- Sample values exercising rounding, sign, saturation and wrap-around.
local VALUES = { 0, 1, -2, 3.75, -100.5, 250, 70000, -0.25, 1e10, -3e9, 0.5, 2 }

local function sample(dtype, n)
  local v = {}
  for i = 1, n do v[i] = VALUES[(i - 1) % #VALUES + 1] end
  return T.array(v, 'float64'):astype(dtype)
end

describe('cuda on a GPU #gpu', function()
  if require('cuda.helpers').without_gpu('transfer/allocator') then return end
  local dev = 'cuda:0'

  it('reports a device', function()
    assert.is_true(cuda.available)
    assert.is_true(cuda.device_count() >= 1)
    assert.matches('cuda:0 ', cuda.info(), 1, true)
    local d = cuda.get_device_from_id(0)
    assert.are.equal('cuda:0', tostring(d))
    assert.are.equal(0, d.id)
    assert.are.equal(d, d:use())
    assert.has_no.errors(function() d:synchronize() end)
    assert.has_no.errors(function() cuda.synchronize() end)
    local n = cuda.device_count()
    local ok, err = pcall(cuda.get_device_from_id, n)
    assert.is_false(ok)
    assert.matches('cuda:' .. n .. ' requested but only ' .. n, err, 1, true)
  end)

  it('round-trips every dtype CPU -> GPU -> CPU unchanged', function()
    for _, dt in ipairs(DTYPES) do
      for _, n in ipairs({ 0, 1, 7, 1000, 100003 }) do
        local x = sample(dt, n)
        local g = x:to_device(dev)
        assert.are.equal(dev, g.device)
        assert.are.equal(dt, g.dtype)
        assert.are.same(x.shape, g.shape)
        assert.are.equal(bytes(x), bytes(g:to_cpu()), dt .. ' n=' .. n)
      end
    end
    -- 0-d tensors
    local s = T.array({ 42 }, 'int32'):reshape({})
    local g = s:to_device(dev)
    assert.are.equal(0, g.ndim)
    assert.are.equal(bytes(s), bytes(g:to_cpu()))
  end)

  it('copies between GPU tensors (same dtype)', function()
    for _, dt in ipairs(DTYPES) do
      local x = sample(dt, 300)
      local g = x:to_device(dev)
      local h = g:copy()
      assert.are.equal(dev, h.device)
      assert.are.equal(bytes(x), bytes(h:to_cpu()), dt)
    end
  end)

  it('casts on the GPU exactly as on the CPU, for every pair of dtypes', function()
    for _, from in ipairs(DTYPES) do
      local x = sample(from, 24)
      local g = x:to_device(dev)
      for _, to in ipairs(DTYPES) do
        local want = bytes(x:astype(to))
        assert.are.equal(want, bytes(g:astype(to):to_cpu()), from .. ' -> ' .. to .. ' (on the GPU)')
        -- casting copies across the bus in both directions
        local d = T.empty(x.shape, to, dev)
        d:copy_(x)
        assert.are.equal(want, bytes(d:to_cpu()), from .. ' -> ' .. to .. ' (host to device)')
        local h = T.empty(x.shape, to)
        h:copy_(g)
        assert.are.equal(want, bytes(h), from .. ' -> ' .. to .. ' (device to host)')
      end
    end
  end)

  it('handles strided and negative-stride views on either side', function()
    for _, dt in ipairs({ 'float32', 'float64', 'int8', 'float16', 'int64' }) do
      local x = sample(dt, 60):reshape({ 3, 4, 5 })
      local views = {
        function(t) return t:transpose() end,
        function(t) return t:flip(1) end,
        function(t) return t:transpose({ 1, 0, 2 }):flip(2) end,
        function(t) return t:as_strided({ 3, 2 }, { 20, 7 }, 1) end,
        function(t) return t:broadcast_to({ 2, 3, 4, 5 }) end,
      }
      for i, view in ipairs(views) do
        local want = bytes(view(x))
        -- strided CPU source -> GPU
        assert.are.equal(want, bytes(view(x):to_device(dev):to_cpu()), dt .. ' view ' .. i .. ' (upload)')
        -- strided GPU source -> CPU
        assert.are.equal(want, bytes(view(x:to_device(dev)):to_cpu()), dt .. ' view ' .. i .. ' (download)')
        -- strided GPU source -> dense GPU copy
        assert.are.equal(want, bytes(view(x:to_device(dev)):copy():to_cpu()), dt .. ' view ' .. i .. ' (on device)')
      end
      -- strided destinations: write into a transposed view on each device
      local src = sample(dt, 60):reshape({ 5, 4, 3 })
      local want = T.zeros({ 3, 4, 5 }, dt)
      want:transpose():copy_(src)
      local gd = T.zeros({ 3, 4, 5 }, dt, dev)
      gd:transpose():copy_(src)                      -- host -> strided device
      assert.are.equal(bytes(want), bytes(gd:to_cpu()), dt .. ' strided device destination')
      local hd = T.zeros({ 3, 4, 5 }, dt)
      hd:transpose():copy_(src:to_device(dev))        -- device -> strided host
      assert.are.equal(bytes(want), bytes(hd), dt .. ' strided host destination')
    end
  end)

  it('fills every dtype, dense and strided', function()
    for _, dt in ipairs(DTYPES) do
      for _, v in ipairs({ 0, 1, -2.5, 300 }) do
        assert.are.equal(bytes(T.full({ 5, 7 }, v, dt)), bytes(T.full({ 5, 7 }, v, dt, dev):to_cpu()), dt .. ' ' .. v)
      end
      local c = T.zeros({ 4, 6 }, dt)
      local g = T.zeros({ 4, 6 }, dt, dev)
      c:transpose():flip(0):fill_(3)
      g:transpose():flip(0):fill_(3)
      assert.are.equal(bytes(c), bytes(g:to_cpu()), dt .. ' full view')
      c:as_strided({ 2, 3 }, { 12, 2 }, 1):fill_(7)
      g:as_strided({ 2, 3 }, { 12, 2 }, 1):fill_(7)
      assert.are.equal(bytes(c), bytes(g:to_cpu()), dt .. ' strided view')
    end
    local e = T.full({ 0, 3 }, 1, 'float32', dev)
    assert.are.same({ 0, 3 }, e.shape)
  end)

  it('caches freed blocks and reuses them without growing', function()
    local pool = cuda.memory_pool()
    -- no collection may free other tensors while we count bytes
    collectgarbage(); collectgarbage()
    collectgarbage('stop')
    finally(function() collectgarbage('restart') end)
    pool:free_all_blocks()
    assert.are.equal(0, pool:free_bytes())
    local used0 = pool:used_bytes()
    local x = T.empty({ 1024, 1024 }, 'float32', dev)          -- 4 MiB
    assert.are.equal(used0 + 4 * 1024 * 1024, pool:used_bytes())
    assert.are.equal(tonumber(C.ch_live_bytes(0)), pool:used_bytes())
    x:free()
    assert.are.equal(used0, pool:used_bytes())
    local cached = pool:free_bytes()
    assert.is_true(cached >= 4 * 1024 * 1024 and cached <= 5 * 1024 * 1024, 'cached ' .. cached)
    assert.are.equal(pool:used_bytes() + cached, pool:total_bytes())
    -- a request of the same size class is served from the cache
    local y = T.empty({ 1000, 1040 }, 'float32', dev)
    assert.are.equal(0, pool:free_bytes())
    y:free()
    assert.are.equal(cached, tonumber(C.ch_cache_bytes(0)))
    pool:free_all_blocks()
    assert.are.equal(0, pool:free_bytes())
    assert.are.equal(0, cuda.memory_pool(0):free_bytes())
  end)

  it('fails an impossible allocation with its size, and recovers', function()
    local ok, err = pcall(function() local t = T.empty({ 1000000, 1000000 }, 'float64', dev); return t end)
    assert.is_false(ok)
    assert.matches('out of memory', err, 1, true)
    assert.matches('8000000000000 bytes', err, 1, true)
    -- the device is still usable
    local x = T.full({ 3 }, 2, 'float32', dev)
    assert.are.same({ 2, 2, 2 }, x:to_cpu():tolist())
  end)
end)

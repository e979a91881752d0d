-- Integer and boolean indexing on a real GPU (issue 15): take,
-- take_along_axis, scatter_add, scatter_add_along_axis, masked_select,
-- nonzero and the index check, through the tensor methods and through
-- F.get_item / F.select_item forward and backward.  Tagged `gpu`: run
-- without a GPU it reports one pending line.
--
-- Every GPU result is compared with the CPU's for the same input.  These
-- kernels move raw elements or add in the CPU's order, so the results must
-- be the same bits (agree(..., exact)).
--
-- NOTE: written without access to a GPU and not yet run on one; the
-- kernels' per-item code runs emulated in tests/cuda/test_index.cu.
local T = require 'chainer.tensor'

local G = require 'cuda.helpers'
local dev, agree, rand = G.dev, G.agree, G.rand
local R = T.random

local DTYPES = { 'bool', 'int8', 'uint8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64' }

describe('indexing on a GPU #gpu', function()
  if G.without_gpu('indexing') then return end

  before_each(function() R.seed(5) end)

  local function idx(shape, n) return R.randint(-n, n, shape, 'int64') end

  it('take agrees with the CPU for every dtype and axis, Lua-table indices included', function()
    for _, dt in ipairs(DTYPES) do
      local x = rand(dt, { 4, 5, 3 })
      for axis = 0, 2 do
        local i = idx({ 2, 3 }, x.shape[axis + 1])
        agree(T.take(x:to_gpu(), i:to_gpu(), axis), T.take(x, i, axis), 'take ' .. dt .. ' axis ' .. axis, 1, true)
      end
      agree(T.take(x:to_gpu(), { 0, -1, 7 }), T.take(x, { 0, -1, 7 }), 'take flat ' .. dt, 1, true)
    end
  end)

  it('take_along_axis agrees with the CPU on a strided x with broadcast indices', function()
    for _, dt in ipairs(DTYPES) do
      local x = rand(dt, { 5, 4, 3 }):transpose({ 2, 1, 0 })
      local i = idx({ 3, 1, 7 }, 5)
      agree(T.take_along_axis(x:to_gpu(), i:to_gpu(), 2), T.take_along_axis(x, i, 2), 'take_along_axis ' .. dt, 1,
        true)
    end
  end)

  it('scatter_add and scatter_add_along_axis accumulate duplicates exactly as the CPU', function()
    for _, dt in ipairs(DTYPES) do
      local t = rand(dt, { 4, 5, 3 })
      local i = idx({ 3, 4 }, 5)
      local v = rand(dt, { 3, 4, 3 })
      local g = t:to_gpu()
      g:scatter_add_(1, i:to_gpu(), v:to_gpu())
      agree(g, t:copy():scatter_add_(1, i, v), 'scatter_add ' .. dt, 1, true)
      local tb = rand(dt, { 1, 5, 3 })
      local ia, va = R.randint(0, 5, { 4, 7, 3 }, 'int64'), rand(dt, { 4, 7, 3 })
      local gb = tb:to_gpu()
      gb:scatter_add_along_axis_(1, ia:to_gpu(), va:to_gpu())
      agree(gb, tb:copy():scatter_add_along_axis_(1, ia, va), 'scatter_add_along_axis ' .. dt, 1, true)
    end
  end)

  it('masked_select and nonzero agree with the CPU across many chunks', function()
    for _, dt in ipairs(DTYPES) do
      local x = rand(dt, { 7, 800, 3 }):flip(1)
      local mask = rand('bool', { 800, 1 })
      agree(T.masked_select(x:to_gpu(), mask:to_gpu()), T.masked_select(x, mask), 'masked_select ' .. dt, 1, true)
      agree(T.nonzero(x:to_gpu()), T.nonzero(x), 'nonzero ' .. dt, 1, true)
    end
  end)

  it('advanced indexing with several index arrays and a bool mask stays on the GPU', function()
    local x = rand('float32', { 4, 5, 6 })
    local a, b = idx({ 2, 3 }, 4), idx({ 3 }, 5)
    agree(x:to_gpu():index(a:to_gpu(), b:to_gpu()), x:index(a, b), 'index a, b', 1, true)
    agree(x:to_gpu():index({ nil, nil }, { true, false, true, true, false }),
      x:index({ nil, nil }, { true, false, true, true, false }), 'index mask', 1, true)
  end)

  it('an out-of-range index fails with the CPU message', function()
    local x = T.zeros({ 3, 4 }, 'float32', dev)
    local ok, err = pcall(T.take, x, T.array({ 0, 9 }, 'int64', dev), 1)
    assert.is_false(ok)
    assert.matches('take: index 9 is out of bounds for axis 1 with size 4', err, 1, true)
  end)

  it('F.get_item and F.select_item differentiate on the GPU like on the CPU', function()
    local F = require 'chainer.functions'
    local chainer = require 'chainer'
    local x = rand('float32', { 6, 5 })
    local t = R.randint(0, 5, { 6 }, 'int64')
    local rows = T.array({ 0, 2, 2, 5 }, 'int64')
    local outs = {}
    for _, on_gpu in ipairs({ false, true }) do
      local move = function(a) return on_gpu and a:to_gpu() or a:copy() end
      local v = chainer.Variable(move(x))
      local y = F.get_item(v, { move(rows) })
      local s = F.select_item(v, move(t))
      local loss = F.sum(y * y) + F.sum(s * s)
      loss:backward()
      outs[#outs + 1] = { y.array, s.array, v.grad }
    end
    agree(outs[2][1], outs[1][1], 'get_item y', 1, true)
    agree(outs[2][2], outs[1][2], 'select_item y', 1, true)
    agree(outs[2][3], outs[1][3], 'get_item + select_item gx', 4)
  end)
end)

-- F.as_strided
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local gradient_check = require 'chainer.gradient_check'
local testing = require 'chainer.testing'

-- Independent reference: walk the output positions in C order and read
-- x's elements (C order = storage order of a fresh tensor) one by one.
local function reference(x, o)
  local flat = x:reshape({ -1 }):totable()
  local out, idx, n = {}, {}, 1
  for i = 1, #o.shape do idx[i] = 0; n = n * o.shape[i] end
  for _ = 1, n do
    local pos = o.offset
    for i = 1, #o.shape do pos = pos + idx[i] * o.strides[i] end
    out[#out + 1] = flat[pos + 1]
    for i = #o.shape, 1, -1 do
      idx[i] = idx[i] + 1
      if idx[i] < o.shape[i] then break end
      idx[i] = 0
    end
  end
  return T.array(out, x.dtype):reshape(o.shape)
end

function_spec.describe('F.as_strided', {
  fn = function(x, o) return F.as_strided(x, o.shape, o.strides, o.offset) end,
  inputs = function(dt) return { T.random.uniform(-1, 1, { 4, 6 }, dt) } end,
  reference = reference,
  double_backward = true,
  cases = {
    -- every other column of the middle rows: no overlap (the copy path)
    { name = 'non_overlapping', opts = { shape = { 2, 3 }, strides = { 6, 2 }, offset = 7 } },
    -- a transposed, reversed read of the whole storage
    { name = 'negative_strides', opts = { shape = { 6, 4 }, strides = { -1, -6 }, offset = 23 } },
    -- sliding windows of 4 with step 3: neighbours share an element
    { name = 'overlapping_windows', opts = { shape = { 6, 4 }, strides = { 3, 1 }, offset = 2 } },
    -- a repeated row (stride 0) and a 3-d view
    { name = 'stride_0', opts = { shape = { 3, 2, 4 }, strides = { 0, 5, 2 }, offset = 1 } },
  },
})

describe('F.as_strided', function()
  it("Chainer's example: overlapping windows accumulate their gradient", function()
    local x = chainer.Variable(T.arange(0, 4, 1, 'float32'))
    local y = F.as_strided(x, { 3, 2 }, { 1, 1 }, 0)
    assert.are.same({ { 0, 1 }, { 1, 2 }, { 2, 3 } }, y.array:totable())
    y.grad = T.ones({ 3, 2 }, 'float32')
    y:backward()
    assert.are.same({ 1, 2, 2, 1 }, x.grad:totable())
  end)

  it('is a view of the storage, and the options table form works', function()
    local d = T.arange(0, 6, 1, 'float64')
    local y = F.as_strided(d, { shape = { 2, 2 }, strides = { 3, 1 }, storage_offset = 1 })
    assert.are.same({ { 1, 2 }, { 4, 5 } }, y.array:totable())
    d:fill_(7)
    assert.are.same({ { 7, 7 }, { 7, 7 } }, y.array:totable())
    local z = F.as_strided(T.arange(0, 6, 1, 'float64'), { 3 }, { 2 }, { storage_offset = 1 })
    assert.are.same({ 1, 3, 5 }, z.array:totable())
  end)

  it("reads x's whole storage; storage_offset defaults to x's own offset", function()
    local base = T.arange(0, 10, 1, 'float64')
    local x = base:slice({ 2, 6 })                          -- elements 2..5, offset 2
    assert.are.same({ 2, 3 }, F.as_strided(x, { 2 }, { 1 }).array:totable())
    assert.are.same({ 0, 1, 2 }, F.as_strided(x, { 3 }, { 1 }, 0).array:totable())
    assert.are.same({ 8, 9 }, F.as_strided(x, { 2 }, { 1 }, 8).array:totable())
    -- the gradient reaches only the elements x itself holds
    local v = chainer.Variable(x)
    local y = F.as_strided(v, { 4 }, { 1 }, 1)               -- storage 1..4 = x[-1..2]
    y.grad = T.array({ 10, 20, 30, 40 }, 'float64')
    y:backward()
    assert.are.same({ 20, 30, 40, 0 }, v.grad:totable())
  end)

  it('splits the gradient among aliases when x overlaps (a broadcast view)', function()
    -- through broadcast_to the total gradient of x0 is the true one
    local x0 = T.random.uniform(-1, 1, { 5 }, 'float64')
    local fn = function(v)
      return F.as_strided(F.broadcast_to(v, { 3, 5 }), { 3, 2 }, { 1, 2 }, 0)
    end
    gradient_check.check_backward(fn, { x0 }, T.random.uniform(-1, 1, { 3, 2 }, 'float64'), nil,
      { eps = 1e-3, atol = 1e-7, rtol = 1e-6 })
    gradient_check.check_double_backward(fn, { x0 }, T.random.uniform(-1, 1, { 3, 2 }, 'float64'),
      { T.random.uniform(-1, 1, { 5 }, 'float64') }, nil, { eps = 1e-3, atol = 1e-7, rtol = 1e-6 })
    -- the direct gradient of the broadcast view: each storage element's sum, split 3 ways
    local b = chainer.Variable(T.arange(0, 5, 1, 'float64'):broadcast_to({ 3, 5 }))
    local y = F.as_strided(b, { 2 }, { 1 }, 3)
    y.grad = T.array({ 3, 6 }, 'float64')
    y:backward()
    testing.assert_allclose(b.grad, T.array({ 0, 0, 0, 1, 2 }, 'float64'):reshape({ 1, 5 }):broadcast_to({ 3, 5 }))
  end)

  it('handles empty views and empty inputs', function()
    local x = chainer.Variable(T.ones({ 4 }, 'float64'))
    local y = F.as_strided(x, { 0, 3 }, { 1, 1 }, 0)
    assert.are.same({ 0, 3 }, y.shape)
    F.sum(y):backward()
    assert.are.same({ 0, 0, 0, 0 }, x.grad:totable())
    local e = chainer.Variable(T.ones({ 0 }, 'float64'))
    local z = F.as_strided(e, { 0 }, { 1 }, 0)
    F.sum(z):backward()
    assert.are.same({ 0 }, e.grad.shape)
  end)

  it('rejects bad arguments naming them', function()
    local x = T.zeros({ 4 })
    local function err(pattern, ...)
      local ok, e = pcall(F.as_strided, x, ...)
      assert.is_false(ok)
      assert.is_truthy(tostring(e):find(pattern, 1, true), tostring(e))
    end
    err("as_strided: shape (3, 2) with strides (1, 1) and storage_offset 1 reaches storage elements 1..4, "
      .. "but x's storage holds 4 elements (0..3)", { 3, 2 }, { 1, 1 }, 1)
    err('reaches storage elements -2..1', { 3, 2 }, { -1, 1 }, 0)
    err('as_strided: strides (1,) has 1 entries but shape (3, 2) has 2', { 3, 2 }, { 1 }, 0)
    err('as_strided: shape[2] must be a non-negative integer (got -2)', { 3, -2 }, { 1, 1 })
    err('as_strided: strides[2] must be an integer (got 1.5)', { 3, 2 }, { 1, 1.5 })
    err('as_strided: storage_offset must be non-negative (got -1)', { 2 }, { 1 }, -1)
    err('as_strided: storage_offset must be an integer (got 0.5)', { 2 }, { 1 }, 0.5)
    err('as_strided: shape must be a Lua array of integers (got number)', 3, { 1 })
    err("as_strided: unknown option 'offset'", { shape = { 2 }, strides = { 1 }, offset = 1 })
    local ok, e = pcall(F.as_strided, 'x', { 2 }, { 1 })
    assert.is_truthy(tostring(e):find('as_strided: x must be a Variable or a tensor (got string)', 1, true))
  end)
end)

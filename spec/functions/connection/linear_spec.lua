-- Specs for F.linear: y = x W^T + b, n_batch_axes, gradients and double
-- gradients, non-contiguous inputs, errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = dofile('spec/functions/connection/conv_reference.lua')

local rnd = require('helpers').uniform

-- float16 (mixed16's activations) computes in float32 and rounds once: the
-- reference is the float64 product of the same (float16) numbers
local function f64(t) return t:astype('float64') end

function_spec.describe('F.linear', {
  fn = function(x, W, b) return F.linear(x, W, b) end,
  inputs = function(dt) return { rnd({ 3, 4 })(dt), rnd({ 5, 4 })(dt), rnd({ 5 })(dt) } end,
  reference = function(x, W, b) return T.matmul(f64(x), f64(W):transpose()) + f64(b) end,
  dtypes = { 'float16', 'float32', 'float64' },
  double_backward = true,
})

function_spec.describe('F.linear nobias', {
  fn = function(x, W) return F.linear(x, W) end,
  inputs = function(dt) return { rnd({ 2, 3 })(dt), rnd({ 4, 3 })(dt) } end,
  reference = function(x, W) return T.matmul(f64(x), f64(W):transpose()) end,
  dtypes = { 'float16', 'float32', 'float64' },
  double_backward = true,
})

function_spec.describe('F.linear n_batch_axes=2', {
  fn = function(x, W, b) return F.linear(x, W, b, { n_batch_axes = 2 }) end,
  inputs = function(dt) return { rnd({ 2, 3, 4 })(dt), rnd({ 5, 4 })(dt), rnd({ 5 })(dt) } end,
  reference = function(x, W, b) return T.matmul(x:reshape({ 6, 4 }), W:transpose()):reshape({ 2, 3, 5 }) + b end,
})

describe('F.linear', function()
  it('computes a hand-checked example', function()
    local x = T.array({ { 1, 2 }, { 3, 4 } }, 'float64')
    local W = T.array({ { 1, 0 }, { 0, 1 }, { 1, 1 } }, 'float64')
    local y = F.linear(x, W, T.array({ 0, 10, 100 }, 'float64'))
    assert.same({ { 1, 12, 103 }, { 3, 14, 107 } }, y.array:totable())
  end)

  it('flattens trailing axes of x (Chainer: x.reshape(batch, -1))', function()
    T.random.seed(9)
    local x = T.random.uniform(-1, 1, { 2, 3, 2 }, 'float64')
    local W = T.random.uniform(-1, 1, { 4, 6 }, 'float64')
    local y = F.linear(x, W)
    chainer.testing.assert_allclose(y.array, T.matmul(x:reshape({ 2, 6 }), W:transpose()), { atol = 1e-12 })
  end)

  it('takes transposed (non-contiguous) x and W', function()
    T.random.seed(10)
    local x = T.random.uniform(-1, 1, { 4, 3 }, 'float32'):transpose()
    local W = T.random.uniform(-1, 1, { 4, 5 }, 'float32'):transpose()
    local y = F.linear(x, W, T.ones({ 5 }, 'float32'))
    chainer.testing.assert_allclose(y.array, T.matmul(x:copy(), W:copy():transpose()) + 1, { atol = 1e-5 })
  end)

  it('handles an empty batch', function()
    local y = F.linear(T.ones({ 0, 3 }), T.ones({ 2, 3 }), T.ones({ 2 }))
    assert.same({ 0, 2 }, y.shape)
  end)

  it('without a graph (no_backprop_mode) gives the same bits as with one, and records no node', function()
    T.random.seed(11)
    for _, dt in ipairs({ 'float32', 'float64' }) do
      local x = chainer.Variable(T.random.uniform(-1, 1, { 1, 7 }, dt))
      local W = chainer.Parameter(T.random.uniform(-1, 1, { 5, 7 }, dt))
      local b = chainer.Parameter(T.random.uniform(-1, 1, { 5 }, dt))
      local with_graph = F.linear(x, W, b)
      assert.is_not_nil(with_graph.creator)
      local without
      chainer.no_backprop_mode(function() without = F.linear(x, W, b) end)
      assert.is_nil(without.creator)
      assert.is_true(without.requires_grad)   -- (as Chainer: the inputs require one)
      assert.same(with_graph.array:totable(), without.array:totable())
      local plain = F.linear(x.array, W.array)   -- tensors only: nothing requires a gradient
      assert.is_nil(plain.creator)
      assert.is_false(plain.requires_grad)
      assert.same(F.linear(x, W).array:totable(), plain.array:totable())
    end
  end)

  it('rejects bad inputs with clear messages', function()
    R.errors_with(function() F.linear(T.ones({ 2, 3 }), T.ones({ 4, 2 })) end, 'linear', 'W.shape[1] is 2')
    R.errors_with(function() F.linear(T.ones({ 2, 3 }), T.ones({ 4, 3 }), T.ones({ 3 })) end, 'linear', 'b must have shape (4,)')
    R.errors_with(function() F.linear(T.ones({ 3 }), T.ones({ 4, 3 })) end, 'linear', 'n_batch_axes')
    R.errors_with(function() F.linear(T.ones({ 2, 3 }), T.ones({ 4, 3 }, 'float64')) end, 'linear', 'dtypes')
    R.errors_with(function() F.linear(T.ones({ 2, 3 }), T.ones({ 3 })) end, 'linear', 'W must be 2-d')
  end)
end)

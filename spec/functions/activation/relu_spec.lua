-- F.relu, F.leaky_relu, F.clipped_relu, F.relu6, F.hard_sigmoid
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'

-- values kept away from the kinks (0, z, +-2.5) so finite differences are smooth
local function away(dt, shape, lo, hi, kinks)
  local x = T.random.uniform(lo or -1, hi or 1, shape or { 3, 4 }, 'float64')
  for _, k in ipairs(kinks or { 0 }) do
    local near = T.lt(T.abs(x - k), 0.05)
    x = T.where(near, x + 0.1, x)
  end
  return { x:astype(dt) }
end

function_spec.describe('F.relu', {
  fn = function(x) return F.relu(x) end, inputs = function(dt) return away(dt) end,
  reference = function(x) return T.maximum(x, 0) end, double_backward = true,
})
function_spec.describe('F.leaky_relu', {
  fn = function(x, o) return F.leaky_relu(x, o) end, inputs = function(dt) return away(dt) end,
  reference = function(x, o) return T.where(T.ge(x, 0), x, x * (o.slope or 0.2)) end, double_backward = true,
  cases = { { name = 'default', opts = {} }, { name = 'slope0.3', opts = { slope = 0.3 } } },
})
function_spec.describe('F.clipped_relu', {
  fn = function(x, o) return F.clipped_relu(x, o) end,
  inputs = function(dt) return away(dt, { 3, 4 }, -2, 2, { 0, 1 }) end,
  reference = function(x, o) return T.clip(x, 0, o.z or 20) end, double_backward = true,
  cases = { { name = 'z1', opts = { z = 1.0 } }, { name = 'default', opts = {} } },
})
function_spec.describe('F.relu6', {
  fn = function(x) return F.relu6(x) end, inputs = function(dt) return away(dt, { 3, 5 }, -8, 8, { 0, 6 }) end,
  reference = function(x) return T.clip(x, 0, 6) end, double_backward = true,
})
function_spec.describe('F.hard_sigmoid', {
  fn = function(x) return F.hard_sigmoid(x) end,
  inputs = function(dt) return away(dt, { 3, 4 }, -4, 4, { -2.5, 2.5 }) end,
  reference = function(x) return T.clip(x * 0.2 + 0.5, 0, 1) end, double_backward = true,
})

describe('relu family', function()
  it('gives exact values, including at the kinks', function()
    local x = T.array({ -2, -0.5, 0, 0.5, 3, 25 }, 'float64')
    assert.are.same({ 0, 0, 0, 0.5, 3, 25 }, F.relu(x).array:totable())
    assert.are.same({ -0.4, -0.1, 0, 0.5, 3, 25 }, F.leaky_relu(x).array:totable())
    assert.are.same({ 0, 0, 0, 0.5, 3, 20 }, F.clipped_relu(x).array:totable())
    assert.are.same({ 0, 0, 0, 0.5, 3, 6 }, F.relu6(x).array:totable())
    local hs = F.hard_sigmoid(x).array:totable()
    local want = { 0.1, 0.4, 0.5, 0.6, 1, 1 }
    for i = 1, #want do assert.is_true(math.abs(hs[i] - want[i]) < 1e-12) end
  end)
  it('sends no gradient through the flat parts (Chainer: 0 < x < z for clipped_relu)', function()
    local x = chainer.Variable(T.array({ -1, 0, 0.5, 1, 2 }, 'float64'))
    local y = F.clipped_relu(x, { z = 1 })
    y.grad = T.ones({ 5 }, 'float64')
    y:backward()
    -- y = sum with unit upstream: gradient is the mask
    assert.are.same({ 0, 0, 1, 0, 0 }, x.grad:totable())
    local x2 = chainer.Variable(T.array({ -1, 0, 2 }, 'float64'))
    local y2 = F.relu(x2)
    y2.grad = T.ones({ 3 }, 'float64')
    y2:backward()
    assert.are.same({ 0, 0, 1 }, x2.grad:totable())
  end)
  it('records no node without a graph (no_backprop_mode, plain tensors): same bits', function()
    local x = chainer.Variable(T.array({ -1.5, 0, 2.25 }, 'float32'))
    local with_graph = F.relu(x)
    assert.is_not_nil(with_graph.creator)
    local without
    chainer.no_backprop_mode(function() without = F.relu(x) end)
    assert.is_nil(without.creator)
    assert.is_true(without.requires_grad)
    assert.same(with_graph.array:totable(), without.array:totable())
    local plain = F.relu(x.array)
    assert.is_nil(plain.creator)
    assert.is_false(plain.requires_grad)
  end)
  it('handles 0-d, empty and non-contiguous inputs', function()
    assert.are.equal(0, F.relu(T.array(-1.5, 'float64')).array:item())
    assert.are.same({ 0, 3 }, F.relu(T.zeros({ 0, 3 })).shape)
    local x = T.array({ { -1, 2 }, { 3, -4 } }, 'float64'):transpose()
    assert.are.same({ { 0, 3 }, { 2, 0 } }, F.relu(x).array:totable())
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.relu(3) end, 'relu: x must be a Variable or a tensor')
    assert.error_matches(function() F.relu(T.array({ 1, 2 }, 'int32')) end, 'relu: x must be a float tensor')
    assert.error_matches(function() F.clipped_relu(T.zeros({ 2 }), { z = -1 }) end, 'clipped_relu: z must be a positive number')
    assert.error_matches(function() F.leaky_relu(T.zeros({ 2 }), { slope = 'a' }) end, 'leaky_relu: slope must be a number')
  end)
end)

-- F.maximum, F.minimum, F.clip, F.squared_difference, F.linear_interpolate,
-- F.fmod, F.bias, F.scale, F.batch_l2_norm_squared
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

local function two(dt) return { U(-1, 1, { 3, 4 }, dt), U(-1, 1, { 3, 4 }, dt) } end

function_spec.describe('F.maximum', {
  fn = function(a, b) return F.maximum(a, b) end, inputs = two,
  reference = function(a, b) return T.where(T.ge(a, b), a, b) end, double_backward = true,
})
function_spec.describe('F.minimum', {
  fn = function(a, b) return F.minimum(a, b) end, inputs = two,
  reference = function(a, b) return T.where(T.le(a, b), a, b) end, double_backward = true,
})
function_spec.describe('F.maximum (broadcast)', {
  fn = function(a, b) return F.maximum(a, b) end,
  inputs = function(dt) return { U(-1, 1, { 3, 4 }, dt), U(-1, 1, { 4 }, dt) } end,
  reference = function(a, b) return T.where(T.ge(a, b), a, b) end,
})
function_spec.describe('F.clip', {
  fn = function(x) return F.clip(x, -0.5, 0.8) end,
  inputs = function(dt)
    local x = U(-1, 1, { 3, 4 }, 'float64')
    x = T.where(T.lt(T.abs(x + 0.5), 0.02), x + 0.05, x)
    x = T.where(T.lt(T.abs(x - 0.8), 0.02), x + 0.05, x)
    return { x:astype(dt) }
  end,
  reference = function(x) return T.minimum(T.maximum(x, -0.5), 0.8) end, double_backward = true,
})
function_spec.describe('F.squared_difference', {
  fn = function(a, b) return F.squared_difference(a, b) end, inputs = two,
  reference = function(a, b) return (a - b) * (a - b) end, double_backward = true,
})
function_spec.describe('F.linear_interpolate', {
  fn = function(p, x, y) return F.linear_interpolate(p, x, y) end,
  inputs = function(dt) return { U(0, 1, { 3, 4 }, dt), U(-1, 1, { 3, 4 }, dt), U(-1, 1, { 3, 4 }, dt) } end,
  reference = function(p, x, y) return p * x + (1 - p) * y end, double_backward = true,
})
function_spec.describe('F.fmod', {
  fn = function(x, d) return F.fmod(x, d) end,
  inputs = function(dt)
    -- keep x / d away from integers (the gradient of divisor jumps there)
    local d = U(0.5, 1, { 3, 4 }, 'float64')
    local k = T.floor(U(-3, 3, { 3, 4 }, 'float64'))
    local frac = U(0.2, 0.8, { 3, 4 }, 'float64')
    return { ((k + frac) * d):astype(dt), d:astype(dt) }
  end,
  reference = function(x, d) return x - T.trunc(x / d) * d end, double_backward = true,
})
function_spec.describe('F.bias', {
  fn = function(x, y) return F.bias(x, y, { axis = 1 }) end,
  inputs = function(dt) return { U(-1, 1, { 2, 3, 4 }, dt), U(-1, 1, { 3 }, dt) } end,
  reference = function(x, y) return x + y:reshape({ 1, 3, 1 }) end, double_backward = true,
})
function_spec.describe('F.scale', {
  fn = function(x, y) return F.scale(x, y, { axis = 1 }) end,
  inputs = function(dt) return { U(-1, 1, { 2, 3, 4 }, dt), U(-1, 1, { 3, 4 }, dt) } end,
  reference = function(x, y) return x * y:reshape({ 1, 3, 4 }) end, double_backward = true,
})
function_spec.describe('F.batch_l2_norm_squared', {
  fn = function(x) return F.batch_l2_norm_squared(x) end,
  inputs = function(dt) return { U(-1, 1, { 3, 2, 2 }, dt) } end,
  reference = function(x) return T.sum(x * x, { axis = { 1, 2 } }) end, double_backward = true,
})

describe('binary math', function()
  it('maximum sends tied gradients to x1 (Chainer)', function()
    local a = chainer.Variable(T.array({ 1, 2 }, 'float64'))
    local b = chainer.Variable(T.array({ 1, 3 }, 'float64'))
    F.sum(F.maximum(a, b)):backward()
    assert.are.same({ 1, 0 }, a.grad:totable())
    assert.are.same({ 0, 1 }, b.grad:totable())
  end)
  it('clip takes one-sided bounds and Chainer keywords', function()
    local x = T.array({ -2, 0, 2 }, 'float64')
    assert.are.same({ -2, 0, 1 }, F.clip(x, nil, 1).array:totable())
    assert.are.same({ -1, 0, 2 }, F.clip(x, { x_min = -1, x_max = false }).array:totable())
    assert.are.same({ -1, 0, 1 }, F.clip(x, { x_min = -1, x_max = 1 }).array:totable())
  end)
  it('fmod keeps the sign of x', function()
    assert.are.same({ -1, 1 }, F.fmod(T.array({ -7, 7 }, 'float64'), T.array({ 3, 3 }, 'float64')).array:totable())
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.clip(T.zeros({ 2 }), 1, 0) end, 'clip: x_min %(1%) must not be greater than x_max %(0%)')
    assert.error_matches(function() F.clip(T.zeros({ 2 }), nil, nil) end, 'clip: x_min and x_max cannot both be nil')
    assert.error_matches(function() F.bias(T.zeros({ 2, 3 }), T.zeros({ 2 })) end,
      'bias: y has shape %(2,%), which must equal x.shape%[1:2%]')
    assert.error_matches(function() F.linear_interpolate(T.zeros({ 2 }), T.zeros({ 2 }), T.zeros({ 3 })) end,
      'linear_interpolate: p, x and y must have the same shape')
    assert.error_matches(function() F.batch_l2_norm_squared(T.zeros({})) end, 'batch_l2_norm_squared: x must have at least one axis')
  end)
end)

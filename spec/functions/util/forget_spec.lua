-- F.forget: values and gradients of the wrapped function, no graph kept
-- between forward and backward, several inputs and outputs, errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

local function inner(x, W, b) return F.tanh(F.linear(x, W, b)) * 2 end

function_spec.describe('F.forget', {
  fn = function(x, W, b) return F.forget(inner, x, W, b) end,
  inputs = function(dt) return { U(-1, 1, { 3, 4 }, dt), U(-1, 1, { 5, 4 }, dt), U(-1, 1, { 5 }, dt) } end,
  reference = function(x, W, b) return T.tanh(T.matmul(x, W:transpose()) + b) * 2 end,
})

function_spec.describe('F.forget (two outputs)', {
  fn = function(a, b) return { F.forget(function(p, q) return p * q, F.exp(p) + q end, a, b) } end,
  inputs = function(dt) return { U(-1, 1, { 2, 3 }, dt), U(-1, 1, { 2, 3 }, dt) } end,
  reference = function(a, b) return { a * b, T.exp(a) + b } end,
})

describe('F.forget', function()
  it('keeps no graph of the inner function and calls it again in backward', function()
    local calls = 0
    local function f(x)
      calls = calls + 1
      return F.sin(x) * F.cos(x)
    end
    local x = chainer.Variable(T.array({ 0.1, 0.7 }, 'float64'))
    local y = F.forget(f, x)
    assert.are.equal(1, calls)
    -- the output's creator is the Forget node itself, whose only input is x
    assert.are.equal('Forget', y.creator:label())
    assert.are.equal(1, #y.creator.inputs)
    F.sum(y):backward()
    assert.are.equal(2, calls)
    local g = x.grad:totable()
    assert.is_true(math.abs(g[1] - math.cos(0.2)) < 1e-14)
    assert.is_true(math.abs(g[2] - math.cos(1.4)) < 1e-14)
  end)
  it('turns tensor inputs into Variables that require a gradient', function()
    local y = F.forget(function(a) return a * 3 end, T.array({ 1, 2 }, 'float32'))
    assert.are.same({ 3, 6 }, y.array:totable())
    assert.is_truthy(y.creator)
  end)
  it('refuses double backprop, as Chainer', function()
    local x = chainer.Variable(T.array({ 0.5 }, 'float64'))
    local y = F.forget(function(a) return a * a end, x)
    assert.error_matches(function()
      chainer.grad({ y }, { x }, { enable_double_backprop = true })
    end, 'forget: double backpropagation through F.forget is not supported')
  end)
  it('rejects bad arguments', function()
    local x = T.ones({ 2 })
    assert.error_matches(function() F.forget(42, x) end, 'forget: func must be a function %(got number%)')
    assert.error_matches(function() F.forget(function(a) return a end) end, 'forget: give at least one input')
    assert.error_matches(function() F.forget(function(a) return a end, 'x') end,
      'forget: input 1 must be a Variable or a tensor %(got string%)')
    assert.error_matches(function() F.forget(function(a) return a.array end, x) end,
      'forget: func must return Variables, but its result 1 is a tensor')
    assert.error_matches(function() F.forget(function() end, x) end, 'forget: func returned nothing')
  end)
end)

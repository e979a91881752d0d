-- Specs for chainer.gradient_check and chainer.testing.assert_allclose.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local gc = chainer.gradient_check
local testing = chainer.testing

local helpers = require 'helpers'
local err_of = helpers.err_of

describe('numerical_grad', function()
  it('central differences of sum(f(x) * gy)', function()
    local x = T.array({ 1, 2, 3 }, 'float64')
    local gy = T.array({ 1, 10, 100 }, 'float64')
    local g = gc.numerical_grad(function() return { x * x } end, { x }, { gy })
    testing.assert_allclose(g[1], { 2, 40, 600 }, { atol = 1e-6 })
    assert.are.same({ 1, 2, 3 }, x:totable())          -- restored
  end)

  it('handles outputs that are views of the input (copies them)', function()
    local x = T.array({ { 1, 2 }, { 3, 4 } }, 'float64')
    local g = gc.numerical_grad(function() return { x:reshape({ 4 }) } end, { x }, { T.array({ 1, 2, 3, 4 }, 'float64') })
    testing.assert_allclose(g[1], { { 1, 2 }, { 3, 4 } }, { atol = 1e-9 })
  end)
end)

describe('check_backward', function()
  local x = T.array({ { 0.5, 1.5, 2 }, { 1, 2, 3 } })

  it('passes for correct functions (float32 inputs, float64 differences)', function()
    gc.check_backward(function(a) return F.exp(a) * a end, x, T.ones({ 2, 3 }))
    gc.check_backward(function(a, b) return F.matmul(a, b) end, { x, T.array({ { 1, 2 }, { 3, 4 }, { 5, 6 } }) },
      T.ones({ 2, 2 }))
    gc.check_backward(function(a) return F.sum(a, { axis = 0 }) end, x, T.array({ 1, 2, 3 }))
    gc.check_backward(function(a) return F.sum(a * a) end, x, nil)        -- scalar output
  end)

  it('checks parameters too', function()
    local W = chainer.Parameter(T.array({ 2, 3, 4 }))
    gc.check_backward(function(a) return a * W end, T.array({ 1, 2, 3 }), T.ones({ 3 }), { W })
    assert.are.equal('float32', W.dtype)                 -- restored after the float64 pass
  end)

  it('skips inputs listed in no_grads and integer inputs', function()
    local idx = T.array({ 0, 1 }, 'int32')
    gc.check_backward(function(a, i) return a * 2 end, { T.array({ 1, 2 }), idx }, T.ones({ 2 }))
    gc.check_backward(function(a, b) return a * b end, { T.array({ 1, 2 }), T.array({ 3, 4 }) }, T.ones({ 2 }),
      nil, { no_grads = { false, true } })
  end)

  it('reports a wrong backward, naming the input', function()
    local Bad = chainer.FunctionNode:extend('Bad')
    function Bad:forward(i) return { i[1] * 2 } end
    function Bad:backward(idx, g) return { g[1] * 3 } end
    local e = err_of(gc.check_backward, function(a) return Bad():apply({ a })[1] end, x, T.ones({ 2, 3 }))
    assert.truthy(e:find('check_backward: the gradient of input 1 differs from the numerical gradient', 1, true))
    assert.truthy(e:find('x = 3, y = 2', 1, true))
  end)
end)

describe('check_double_backward', function()
  it('passes for differentiable backward passes', function()
    local x = T.array({ 0.5, 1.5, 2 }, 'float64')
    gc.check_double_backward(function(a) return a * a * a end, x, T.ones({ 3 }, 'float64'), T.ones({ 3 }, 'float64'))
    gc.check_double_backward(function(a) return F.exp(a) * F.log(a) end, x, T.array({ 1, 2, 3 }, 'float64'),
      T.array({ 0.5, -1, 2 }, 'float64'))
  end)

  it('fails when the backward pass is not differentiable', function()
    local Flat = chainer.FunctionNode:extend('Flat')
    function Flat:forward(i) self:retain_inputs({ 1 }) return { i[1] * i[1] } end
    function Flat:backward(idx, g)
      local x = self:get_retained_inputs()[1]
      -- built from raw tensors: no graph, so no second-order gradient
      return { chainer.Variable(x.array * 2 * g[1].array) }
    end
    local e = err_of(gc.check_double_backward, function(a) return Flat():apply({ a })[1] end,
      T.array({ 1, 2 }, 'float64'), T.ones({ 2 }, 'float64'), T.ones({ 2 }, 'float64'))
    assert.truthy(e:find('check_double_backward:', 1, true))
  end)
end)

describe('testing.assert_allclose', function()
  it('compares with atol + rtol * |y| and NaN == NaN', function()
    assert.is_true(testing.assert_allclose(T.array({ 1, 2 }), { 1, 2.0001 }))
    assert.is_true(testing.assert_allclose(T.array({ 0 / 0, 1 }), { 0 / 0, 1 }))
    assert.is_true(testing.assert_allclose(chainer.Variable(T.array({ 3 })), 3))
    assert.is_true(testing.assert_allclose(T.array({ 1, 1.1 }), { 1, 1 }, { atol = 0.2 }))
    local e = err_of(testing.assert_allclose, T.array({ 1, 2 }), { 1, 3 })
    assert.truthy(e:find('not close (atol=1e-05, rtol=0.0001)', 1, true))
    assert.truthy(e:find('mismatch: 1 of 2 elements; max absolute error 1 at index (1): x = 2, y = 3', 1, true))
    assert.truthy(err_of(testing.assert_allclose, T.ones({ 2 }), T.ones({ 3 })):find('shapes differ', 1, true))
  end)
end)

-- F.sigmoid, F.tanh, F.softplus, F.swish
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

local function x34(dt) return { U(-3, 3, { 3, 4 }, dt) } end

function_spec.describe('F.sigmoid', {
  fn = function(x) return F.sigmoid(x) end, inputs = x34,
  reference = function(x) return T.reciprocal(T.exp(-x) + 1) end, double_backward = true,
})
function_spec.describe('F.tanh', {
  fn = function(x) return F.tanh(x) end, inputs = x34,
  reference = function(x) local e = T.exp(x * 2) return (e - 1) / (e + 1) end, double_backward = true,
})
function_spec.describe('F.softplus', {
  fn = function(x, o) return F.softplus(x, o) end, inputs = x34,
  reference = function(x, o)
    local b = o.beta or 1
    return T.log(T.exp(x * b) + 1) / b
  end,
  double_backward = true,
  cases = { { name = 'default', opts = {} }, { name = 'beta2', opts = { beta = 2.0 } } },
})
function_spec.describe('F.swish', {
  fn = function(x, beta) return F.swish(x, beta) end,
  inputs = function(dt) return { U(-3, 3, { 3, 4, 2 }, dt), U(0.5, 2, { 4 }, dt) } end,
  reference = function(x, beta)
    local b = beta:reshape({ 1, 4, 1 })
    return x * T.reciprocal(T.exp(-(x * b)) + 1)
  end,
  double_backward = true,
})

describe('sigmoid family', function()
  it('gives known values', function()
    local x = T.array({ 0, 100, -100 }, 'float64')
    local sg = F.sigmoid(x).array:totable()
    assert.is_true(sg[1] == 0.5 and sg[2] == 1 and sg[3] < 1e-43)
    assert.are.same({ 0, 1, -1 }, F.tanh(x).array:totable())
    local sp = F.softplus(x).array:totable()
    assert.is_true(math.abs(sp[1] - math.log(2)) < 1e-15 and sp[2] == 100 and sp[3] < 1e-40)
  end)
  it('rejects a beta of the wrong shape', function()
    assert.error_matches(function() F.swish(T.zeros({ 2, 3 }), T.zeros({ 2 })) end,
      'swish: beta has shape %(2,%), which must equal x.shape%[1:2%]')
    assert.error_matches(function() F.softplus(T.zeros({ 2 }), { beta = 0 }) end, 'softplus: beta must be a non%-zero number')
  end)
end)

-- The same function through chainer.testing's FunctionTestCase (the API a
-- user's spec uses), over float16/32/64 and three shapes.
local testing = require 'chainer.testing'
local SigmoidTest = testing.FunctionTestCase:extend('SigmoidTest')
function SigmoidTest:setup()
  if self.dtype == 'float16' then
    self.check_forward_options = { atol = 1e-3, rtol = 1e-3 }
    self.check_backward_options = { atol = 1e-2, rtol = 5e-2 }
    self.check_double_backward_options = { atol = 1e-2, rtol = 5e-2 }
  end
end
function SigmoidTest:generate_inputs() return { U(-3, 3, self.shape, self.dtype) } end
function SigmoidTest:forward(inputs) return { F.sigmoid(inputs[1]) } end
-- 1 / (1 + e^-x) in float64, rounded to the input's dtype
function SigmoidTest:forward_expected(inputs)
  local x = inputs[1]:astype('float64')
  return { T.reciprocal(T.exp(-x) + 1):astype(self.dtype) }
end
testing.parameterize(testing.product({ dtype = { 'float16', 'float32', 'float64' }, shape = { {}, { 5 }, { 2, 3 } } }))(
  SigmoidTest)

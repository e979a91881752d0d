-- F.elu, F.selu
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'

local function inputs(dt)
  local x = T.random.uniform(-2, 2, { 3, 4 }, 'float64')
  x = T.where(T.lt(T.abs(x), 0.05), x + 0.1, x)
  return { x:astype(dt) }
end
local function ref_elu(x, alpha) return T.where(T.lt(x, 0), (T.exp(x) - 1) * alpha, x) end

function_spec.describe('F.elu', {
  fn = function(x, o) return F.elu(x, o) end, inputs = inputs,
  reference = function(x, o) return ref_elu(x, o.alpha or 1) end, double_backward = true,
  cases = { { name = 'default', opts = {} }, { name = 'alpha0.5', opts = { alpha = 0.5 } } },
})
function_spec.describe('F.selu', {
  fn = function(x) return F.selu(x) end, inputs = inputs,
  reference = function(x) return ref_elu(x, 1.6732632423543772) * 1.0507009873554805 end, double_backward = true,
})

describe('elu', function()
  it('gives known values', function()
    local y = F.elu(T.array({ -1, 0, 2 }, 'float64')).array:totable()
    assert.is_true(math.abs(y[1] - (math.exp(-1) - 1)) < 1e-15)
    assert.are.equal(0, y[2])
    assert.are.equal(2, y[3])
  end)
  it('rejects a non-number alpha', function()
    assert.error_matches(function() F.elu(T.zeros({ 2 }), { alpha = 'x' }) end, 'elu: alpha must be a number')
  end)
end)

local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'

local red = require('helpers').reduce_loss

function_spec.describe('F.gaussian_kl_divergence', {
  fn = function(m, v, o) return F.gaussian_kl_divergence(m, v, o) end,
  inputs = function(dtype) return { T.random.uniform(-1, 1, { 3, 4 }, dtype), T.random.uniform(-1, 1, { 3, 4 }, dtype) } end,
  reference = function(m, v, o) return red((m * m + T.exp(v) - v - 1) * 0.5, o) end,
  double_backward = true,
  cases = { { name = 'sum', opts = {} }, { name = 'mean', opts = { reduce = 'mean' } }, { name = 'no', opts = { reduce = 'no' } } },
})

describe('F.gaussian_kl_divergence', function()
  it('is 0 for the standard normal; errors', function()
    local y = F.gaussian_kl_divergence(T.zeros({ 2 }, 'float32'), T.zeros({ 2 }, 'float32'))
    assert.are.equal(0, y.array:item())
    local ok, e = pcall(F.gaussian_kl_divergence, T.zeros({ 2 }, 'float32'), T.zeros({ 2 }, 'float32'), { reduce = 'x' })
    assert.is_truthy(tostring(e):find("gaussian_kl_divergence: reduce must be 'sum' or 'mean' or 'no'", 1, true))
  end)
end)

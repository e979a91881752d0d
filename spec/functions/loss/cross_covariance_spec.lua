local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'

local function cov(y, z)
  local yc = y - T.mean(y, { axis = 0, keepdims = true })
  local zc = z - T.mean(z, { axis = 0, keepdims = true })
  return T.matmul(yc:transpose(), zc) / y.shape[1]
end

function_spec.describe('F.cross_covariance', {
  fn = function(y, z, o) return F.cross_covariance(y, z, o) end,
  inputs = function(dtype) return { T.random.uniform(-1, 1, { 4, 3 }, dtype), T.random.uniform(-1, 1, { 4, 2 }, dtype) } end,
  reference = function(y, z, o)
    local c = cov(y, z)
    if o.reduce == 'no' then return c end
    return T.sum(c * c) * 0.5
  end,
  double_backward = true,
  cases = { { name = 'half_squared_sum', opts = {} }, { name = 'no', opts = { reduce = 'no' } } },
})

describe('F.cross_covariance', function()
  it('errors', function()
    local ok, e = pcall(F.cross_covariance, T.zeros({ 4, 3 }, 'float32'), T.zeros({ 5, 2 }, 'float32'))
    assert.is_truthy(tostring(e):find('cross_covariance: y and z must have the same number of rows', 1, true))
    ok, e = pcall(F.cross_covariance, T.zeros({ 4 }, 'float32'), T.zeros({ 4, 2 }, 'float32'))
    assert.is_truthy(tostring(e):find('cross_covariance: y must be 2-d', 1, true))
  end)
end)

local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'

local function inputs(dtype)
  local a = T.random.uniform(-1, 1, { 3, 4 }, dtype)
  local d = T.random.uniform(0.1, 1, { 3, 4 }, dtype) * T.sign(T.random.uniform(-1, 1, { 3, 4 }, dtype))
  return { a, a + d }
end

function_spec.describe('F.mean_absolute_error', {
  fn = function(a, b) return F.mean_absolute_error(a, b) end,
  inputs = inputs,
  reference = function(a, b) return T.mean(T.abs(a - b)) end,
  double_backward = true,
})

describe('F.mean_absolute_error', function()
  it('values and errors', function()
    local y = F.mean_absolute_error(T.array({ 1, 2, 3, 4 }, 'float32'), T.zeros({ 4 }, 'float32'))
    assert.is_true(math.abs(y.array:item() - 2.5) < 1e-6)
    local ok, e = pcall(F.mean_absolute_error, 3, T.zeros({ 3 }, 'float32'))
    assert.is_false(ok)
    assert.is_truthy(tostring(e):find('mean_absolute_error: x0 must be a Variable or a tensor', 1, true))
  end)
end)

local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'

local function reference(a, p, n, o)
  local d = T.sum(T.square(a - p) - T.square(a - n), { axis = 1 }) + o.margin
  local h = T.maximum(d, 0):astype(a.dtype)
  if o.reduce == 'no' then return h end
  return T.mean(h)
end

function_spec.describe('F.triplet', {
  fn = function(a, p, n, o) return F.triplet(a, p, n, { margin = o.margin, reduce = o.reduce }) end,
  inputs = function(dtype)
    -- rows 0-1 active (hinge > 0), rows 2-3 inactive: away from the kink
    local a = T.random.uniform(-1, 1, { 4, 3 }, dtype)
    local near = T.random.uniform(-0.1, 0.1, { 4, 3 }, dtype)
    local p = a + T.array({ { 1 }, { 1 }, { 0.1 }, { 0.1 } }, dtype) * T.random.uniform(0.5, 1, { 4, 3 }, dtype)
    local n = a + near + T.array({ { 0 }, { 0 }, { 2 }, { 2 } }, dtype)
    return { a, p, n }
  end,
  reference = reference,
  double_backward = true,
  cases = { { name = 'mean', opts = { margin = 0.2 } }, { name = 'no', opts = { margin = 0.5, reduce = 'no' } } },
})

describe('F.triplet', function()
  it('hand value and errors', function()
    local a = T.zeros({ 1, 2 }, 'float64')
    local y = F.triplet(a, T.array({ { 1, 0 } }, 'float64'), T.array({ { 0.5, 0 } }, 'float64'))
    assert.is_true(math.abs(y.array:item() - (1 - 0.25 + 0.2)) < 1e-12)
    local ok, e = pcall(F.triplet, a, T.zeros({ 1, 3 }, 'float64'), a)
    assert.is_truthy(tostring(e):find('triplet: anchor and positive must have the same shape', 1, true))
  end)
end)

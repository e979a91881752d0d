-- Elementwise math: trigonometric, hyperbolic, exp/log, sqrt family, erf
-- family, lgamma/digamma, arctan2, and the forward-only rounding functions.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

-- name, domain, reference (independent formula), double backward?
local unary = {
  { 'sin', -3, 3, function(x) return T.sin(x) end, true },
  { 'cos', -3, 3, function(x) return T.sin(x + math.pi / 2) end, true },
  { 'tan', -1, 1, function(x) return T.sin(x) / T.cos(x) end, true },
  { 'arcsin', -0.7, 0.7, function(x) return T.arctan(x / T.sqrt(1 - x * x)) end, true },
  { 'arccos', -0.7, 0.7, function(x) return -T.arctan(x / T.sqrt(1 - x * x)) + math.pi / 2 end, true },
  { 'arctan', -3, 3, function(x) return T.arctan2(x, T.ones_like(x)) end, true },
  { 'sinh', -2, 2, function(x) return (T.exp(x) - T.exp(-x)) / 2 end, true },
  { 'cosh', -2, 2, function(x) return (T.exp(x) + T.exp(-x)) / 2 end, true },
  { 'arctanh', -0.7, 0.7, function(x) return T.log((x + 1) / (1 - x)) / 2 end, true },
  { 'log2', 0.5, 3, function(x) return T.log(x) / math.log(2) end, true },
  { 'log10', 0.5, 3, function(x) return T.log(x) / math.log(10) end, true },
  { 'log1p', -0.5, 3, function(x) return T.log(x + 1) end, true },
  { 'expm1', -2, 2, function(x) return T.exp(x) - 1 end, true },
  { 'sqrt', 0.5, 3, function(x) return T.pow(x, 0.5) end, true },
  { 'rsqrt', 0.5, 3, function(x) return T.pow(x, -0.5) end, true },
  { 'square', -2, 2, function(x) return x * x end, true },
  { 'erf', -2, 2, function(x) return 1 - T.erfc(x) end, true },
  { 'erfc', -2, 2, function(x) return 1 - T.erf(x) end, true },
  { 'erfinv', -0.7, 0.7, nil, true },
  { 'ndtr', -2, 2, function(x) return (T.erf(x / math.sqrt(2)) + 1) / 2 end, true },
  { 'lgamma', 0.5, 4, function(x) return T.lgamma(x) end, true },
  { 'digamma', 0.5, 4, function(x) return T.digamma(x) end, true },
}

for _, u in ipairs(unary) do
  local name, lo, hi, ref, dbl = u[1], u[2], u[3], u[4], u[5]
  function_spec.describe('F.' .. name, {
    fn = function(x) return F[name](x) end,
    inputs = function(dt) return { U(lo, hi, { 3, 4 }, dt) } end,
    reference = ref, double_backward = dbl,
    forward_tol = { float32 = { atol = 1e-5, rtol = 1e-4 }, float64 = { atol = 1e-12, rtol = 1e-10 } },
  })
end

function_spec.describe('F.arctan2', {
  fn = function(a, b) return F.arctan2(a, b) end,
  inputs = function(dt) return { U(-2, 2, { 3, 4 }, dt), U(0.5, 2, { 3, 4 }, dt) } end,
  reference = function(a, b) return T.arctan(a / b) end, double_backward = true,
})
function_spec.describe('F.arctan2 (broadcast)', {
  fn = function(a, b) return F.arctan2(a, b) end,
  inputs = function(dt) return { U(-2, 2, { 3, 4 }, dt), U(0.5, 2, { 1, 4 }, dt) } end,
  reference = function(a, b) return T.arctan(a / b) end,
})

describe('elementwise math', function()
  it('erfinv inverts erf and digamma matches known values', function()
    local x = T.array({ -0.7, 0, 0.3, 0.95 }, 'float64')
    local back = T.erf(F.erfinv(x).array)
    assert.is_true(T.max(T.abs(back - x)):item() < 1e-13)
    local d = F.digamma(T.array({ 1, 0.5 }, 'float64')).array:totable()
    assert.is_true(math.abs(d[1] + 0.5772156649015329) < 1e-12)
    assert.is_true(math.abs(d[2] - (-0.5772156649015329 - 2 * math.log(2))) < 1e-12)
  end)
  it("digamma's gradient is trigamma (pi^2/6 at 1, reflection for negatives)", function()
    local x = chainer.Variable(T.array({ 1, 0.5, 7.5, -0.5 }, 'float64'))
    local y = F.digamma(x)
    y.grad = T.ones({ 4 }, 'float64')
    y:backward()
    local g = x.grad:totable()
    assert.is_true(math.abs(g[1] - math.pi ^ 2 / 6) < 1e-10)
    assert.is_true(math.abs(g[2] - math.pi ^ 2 / 2) < 1e-10)
    assert.is_true(math.abs(g[3] - 0.14261) < 1e-5)
    -- psi1(-0.5) = pi^2/sin^2(-pi/2) - psi1(1.5) = pi^2 - (pi^2/2 - 4)
    assert.is_true(math.abs(g[4] - (math.pi ^ 2 / 2 + 4)) < 1e-9)
  end)
  it('floor, ceil, fix and sign are forward-only and keep the dtype', function()
    local x = chainer.Variable(T.array({ -1.5, -0.2, 0, 0.7, 2 }, 'float32'))
    assert.are.same({ -2, -1, 0, 0, 2 }, F.floor(x).array:totable())
    assert.are.same({ -1, -0, 0, 1, 2 }, F.ceil(x).array:totable())
    assert.are.same({ -1, -0, 0, 0, 2 }, F.fix(x).array:totable())
    assert.are.same({ -1, -1, 0, 1, 1 }, F.sign(x).array:totable())
    assert.are.equal('float32', F.floor(x).dtype)
    assert.is_nil(F.floor(x).creator)
  end)
  it('handles 0-d, empty and non-contiguous inputs', function()
    assert.is_true(math.abs(F.sin(T.array(1, 'float64')).array:item() - math.sin(1)) < 1e-15)
    assert.are.same({ 0, 2 }, F.sqrt(T.zeros({ 0, 2 })).shape)
    local x = T.array({ { 1, 4 }, { 9, 16 } }, 'float64'):transpose()
    assert.are.same({ { 1, 3 }, { 2, 4 } }, F.sqrt(x).array:totable())
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.sin('a') end, 'sin: x must be a Variable or a tensor')
    assert.error_matches(function() F.log2(T.array({ 1 }, 'int32')) end, 'log2: x must be a float tensor')
    assert.error_matches(function() F.arctan2(T.zeros({ 2 }), T.zeros({ 2 }, 'float64')) end,
      'arctan2: x1 and x2 have different dtypes')
  end)
end)

-- The same kind of check through chainer.testing.unary_math_function_unittest
-- (float16/32/64, shapes {3, 2} and {}), as a user's spec writes it; the
-- expected values come from other formulas.
local testing = require 'chainer.testing'
local function positive(shape, dtype)
  return U(0.5, 2, shape, dtype), U(-1, 1, shape, dtype), U(-1, 1, shape, dtype)
end
testing.unary_math_function_unittest('sin', function(x) return T.cos(x - math.pi / 2) end)('F.sin (unary_math_function_unittest)')
testing.unary_math_function_unittest(F.sqrt, function(x) return T.exp(T.log(x) / 2) end,
  { make_data = positive })('F.sqrt (unary_math_function_unittest)')
testing.unary_math_function_unittest(F.tanh, function(x) return (T.exp(x * 2) - 1) / (T.exp(x * 2) + 1) end)(
  'F.tanh (unary_math_function_unittest)')

-- Special functions beyond the erf and gamma basics: erfcinv, erfcx, ndtri,
-- log_ndtr, polygamma and the Hurwitz zeta function (values, gradients,
-- double gradients, tails and domain edges, bad inputs).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

local sqrt2 = math.sqrt(2)
local tight = { float32 = { atol = 1e-5, rtol = 1e-4 }, float64 = { atol = 1e-12, rtol = 1e-10 } }

-- Independent formulas, each accurate inside the tested range.
local unary = {
  { 'erfcinv', 0.3, 1.7, function(x) return T.erfinv(1 - x) end },
  { 'erfcx', -2, 2, function(x) return T.exp(x * x) * T.erfc(x) end },
  { 'ndtri', 0.2, 0.8, function(p) return T.erfinv(p * 2 - 1) * sqrt2 end, 1e-4 },
  { 'log_ndtr', -3, 3, function(x) return T.log(T.ndtr(x)) end },
}
for _, u in ipairs(unary) do
  local name, lo, hi, ref, eps = u[1], u[2], u[3], u[4], u[5]
  function_spec.describe('F.' .. name, {
    fn = function(x) return F[name](x) end,
    inputs = function(dt) return { U(lo, hi, { 3, 4 }, dt) } end,
    reference = ref, double_backward = true, forward_tol = tight, eps = eps,
  })
end

-- zeta(s, q) by brute force: 200 terms, then the Euler-Maclaurin tail up
-- to its first Bernoulli term (the error is below 1e-13 for s >= 1.5).
local function zeta_reference(s, q)
  local dt = q.dtype
  s, q = s:astype('float64'), q:astype('float64')
  local sum = T.zeros_like(q)
  for k = 0, 199 do sum = sum + T.pow(q + k, -s) end
  local a = q + 200
  sum = sum + T.pow(a, 1 - s) / (s - 1) + T.pow(a, -s) * 0.5 + s * T.pow(a, -s - 1) / 12
  return sum:astype(dt)
end

function_spec.describe('F.zeta', {
  fn = function(s, q) return F.zeta(s, q) end,
  inputs = function(dt) return { U(1.5, 4, { 3, 4 }, dt), U(1, 3, { 3, 4 }, dt) } end,
  no_grads = { true, false },
  reference = zeta_reference, double_backward = true,
})

function_spec.describe('F.zeta (number order)', {
  fn = function(q) return F.zeta(2.5, q) end,
  inputs = function(dt) return { U(1, 3, { 3, 4 }, dt) } end,
  reference = function(q) return zeta_reference(T.full_like(q, 2.5), q) end, double_backward = true,
})

-- polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1, digamma for 0
for _, n in ipairs({ 0, 1, 2, 3 }) do
  function_spec.describe('F.polygamma (n = ' .. n .. ')', {
    fn = function(order, x) return F.polygamma(order, x) end,
    inputs = function(dt) return { T.full({ 3, 4 }, n, 'int32'), U(1, 3, { 3, 4 }, dt) } end,
    reference = function(order, x)
      if n == 0 then return T.digamma(x) end
      local fact = ({ 1, 2, 6 })[n]
      return zeta_reference(T.full_like(x, n + 1), x) * ((n % 2 == 1) and fact or -fact)
    end,
    double_backward = true,
  })
end

local function values(v) return v.array:totable() end
local function near(got, want, tol)
  for i = 1, #want do
    local g, w = got[i], want[i]
    if w == math.huge or w == -math.huge then
      assert.are.equal(w, g)
    else
      assert.is_true(math.abs(g - w) <= tol * math.max(1, math.abs(w)),
        string.format('element %d: got %.17g, want %.17g', i, g, w))
    end
  end
end

describe('special functions', function()
  it('know their classic values', function()
    local pi = math.pi
    near(values(F.zeta(T.array({ 2, 4, 2 }, 'float64'), T.array({ 1, 1, 0.5 }, 'float64'))),
      { pi ^ 2 / 6, pi ^ 4 / 90, pi ^ 2 / 2 }, 1e-14)
    near(values(F.polygamma(T.array({ 1, 1, 2, 3, 1 }, 'int32'), T.array({ 1, 0.5, 1, 0.5, -0.5 }, 'float64'))),
      { pi ^ 2 / 6, pi ^ 2 / 2, -2.4041138063191885, pi ^ 4, pi ^ 2 / 2 + 4 }, 1e-13)
    near(values(F.ndtri(T.array({ 0.975, 0.5, 0, 1 }, 'float64'))), { 1.959963984540054, 0, -math.huge, math.huge },
      1e-14)
    near(values(F.erfcx(T.array({ 0, 1 }, 'float64'))), { 1, 0.42758357615580705 }, 1e-15)
  end)
  it('stay accurate in the tails', function()
    local pi = math.pi
    -- erfcinv of tiny y, where erfinv(1 - y) would have rounded to infinity
    local y = T.array({ 1e-20, 1e-100, 1e-300 }, 'float64')
    local x = F.erfcinv(y).array
    near((T.erfc(x) / y):totable(), { 1, 1, 1 }, 1e-13)
    -- erfcx beyond erfc's underflow: 1 / (x sqrt(pi)) (1 - 1/(2x^2) + ...)
    local big = 1e4
    near(values(F.erfcx(T.array({ big }, 'float64'))), { (1 - 0.5 / big ^ 2) / (big * math.sqrt(pi)) }, 1e-15)
    -- log_ndtr far in the lower tail: -x^2/2 - log(-x sqrt(2 pi)) + log(1 - 1/x^2 + 3/x^4 - ...)
    local lx = -40
    near(values(F.log_ndtr(T.array({ lx, 10 }, 'float64'))),
      { -lx * lx / 2 - math.log(-lx * math.sqrt(2 * pi)) - 1 / lx ^ 2 + 2.5 / lx ^ 4 - 37 / 3 / lx ^ 6, -7.6198530241605269e-24 }, 1e-12)
    -- and the erfcx form of its gradient stays finite there
    local v = chainer.Variable(T.array({ -40, 0, 40 }, 'float64'))
    local g = chainer.grad({ F.log_ndtr(v) }, { v }, { grad_outputs = { T.ones({ 3 }, 'float64') } })[1]
    near(values(g), { 40.02497, math.sqrt(2 / pi), 0 }, 1e-6)
  end)
  it('follow SciPy at the domain edges', function()
    local e = values(F.erfcinv(T.array({ 0, 2, -0.5, 2.5 }, 'float64')))
    assert.are.equal(math.huge, e[1])
    assert.are.equal(-math.huge, e[2])
    assert.is_true(e[3] ~= e[3] and e[4] ~= e[4])
    local z = values(F.zeta(T.array({ 1, 0.5, 2 }, 'float64'), T.array({ 1, 1, 0 }, 'float64')))
    assert.are.equal(math.huge, z[1])
    assert.is_true(z[2] ~= z[2])
    assert.are.equal(math.huge, z[3])
  end)
  it('give float32 results for float32 inputs, computed in double', function()
    local y = F.polygamma(T.array({ 1 }, 'int32'), T.array({ 1 }, 'float32'))
    assert.are.equal('float32', y.dtype)
    assert.is_true(math.abs(y.array:item() - math.pi ^ 2 / 6) < 1e-6)
    assert.are.equal('float32', F.zeta(T.array({ 2 }, 'float64'), T.array({ 1 }, 'float32')).dtype)
  end)
  it("make digamma's gradient (polygamma 1) differentiable again (polygamma 2)", function()
    local x = chainer.Variable(T.array({ 1, 0.5 }, 'float64'))
    local gx = chainer.grad({ F.digamma(x) }, { x }, { grad_outputs = { T.ones({ 2 }, 'float64') },
      enable_double_backprop = true })[1]
    near(values(gx), { math.pi ^ 2 / 6, math.pi ^ 2 / 2 }, 1e-13)
    local ggx = chainer.grad({ gx }, { x }, { grad_outputs = { T.ones({ 2 }, 'float64') } })[1]
    near(values(ggx), { -2.4041138063191885, -16.828796644234319 }, 1e-13)
  end)
  it('reject bad inputs', function()
    local x = T.ones({ 2, 3 }, 'float64')
    assert.error_matches(function() F.erfcx(T.array({ 1 }, 'int32')) end, 'erfcx: x must be a float tensor')
    assert.error_matches(function() F.ndtri('a') end, 'ndtri: x must be a Variable or a tensor')
    assert.error_matches(function() F.polygamma(T.ones({ 2, 3 }), x) end, 'polygamma: n must be an integer tensor')
    assert.error_matches(function() F.polygamma(1.5, x) end, 'polygamma: n must be a non%-negative integer')
    assert.error_matches(function() F.polygamma(T.ones({ 4 }, 'int32'), x) end,
      'polygamma: n %(shape %(4,%)%) must have the shape of x')
    assert.error_matches(function() F.zeta(2, T.array({ 1 }, 'int32')) end, 'zeta: q must be a float tensor')
    assert.error_matches(function() F.zeta('2', x) end, 'zeta: x must be a Variable or a tensor')
    assert.error_matches(function() F.zeta(T.ones({ 4 }, 'float64'), x) end,
      'zeta: x %(shape %(4,%)%) must have the shape of q')
  end)
end)

-- Specs for chainer.optimizer_hooks: each hook's effect on the gradients
-- (hand-computed), its attributes, options and bad arguments; and the
-- optimizer trajectories of the real-Chainer oracle (opt_*.npz).
local chainer = require 'chainer'
local T = chainer.tensor
local O = require 'chainer.optimizers'
local H = require 'chainer.optimizer_hooks'
local Link = chainer.Link or require('chainer.link').Link

local helpers = require 'helpers'
local err_of = helpers.err_of

local function assert_list(got, want, tol)
  if T.is_tensor(got) then got = got:tolist() end
  assert.are.equal(#want, #got)
  for i = 1, #want do
    assert(math.abs(got[i] - want[i]) <= (tol or 1e-12) * (1 + math.abs(want[i])),
      string.format('element %d: %.17g, expected %.17g', i, got[i], want[i]))
  end
end

-- SGD with lr = 1 exposes the processed gradient as p_before - p_after.
local function run_hook(hook, params, grads, dtype)
  local m = Link()
  local ps = {}
  for i, v in ipairs(params) do
    ps[i] = chainer.Parameter(T.array(v, dtype or 'float64'))
    m:add_param('p' .. i, ps[i])
  end
  local opt = O.SGD{ lr = 1 }:setup(m)
  opt:add_hook(hook)
  for i, g in ipairs(grads) do ps[i].grad = T.array(g, dtype or 'float64') end
  opt:update()
  local out = {}
  for i, p in ipairs(ps) do out[i] = p.grad:tolist() end
  return out, ps
end

describe('optimizer hooks', function()
  it('WeightDecay adds rate * p to the gradient', function()
    local g = run_hook(H.WeightDecay(0.1), { { 1, -2, 0 } }, { { 0.5, 0.5, 0.5 } })
    assert_list(g[1], { 0.6, 0.3, 0.5 })
    assert.are.equal('WeightDecay', H.WeightDecay(1).name)
    assert.are.equal('pre', H.WeightDecay(1).timing)
    assert.is_true(H.WeightDecay(1).call_for_each_param)
    assert.are.equal(0.25, H.WeightDecay{ rate = 0.25 }.rate)
  end)

  it('Lasso adds rate * sign(p)', function()
    local g = run_hook(H.Lasso(0.1), { { 3, -2, 0 } }, { { 0.5, 0.5, 0.5 } })
    assert_list(g[1], { 0.6, 0.4, 0.5 })
  end)

  it('GradientClipping rescales by the global norm over all parameters', function()
    -- grads {3, 0} and {4}: global norm 5 -> scaled by 2/5
    local g = run_hook(H.GradientClipping(2), { { 0, 0 }, { 0 } }, { { 3, 0 }, { 4 } })
    assert_list(g[1], { 1.2, 0 })
    assert_list(g[2], { 1.6 })
    -- below the threshold: untouched
    g = run_hook(H.GradientClipping(10), { { 0, 0 }, { 0 } }, { { 3, 0 }, { 4 } })
    assert_list(g[1], { 3, 0 })
    -- float32 too
    g = run_hook(H.GradientClipping(1), { { 0, 0 }, { 0 } }, { { 3, 0 }, { 4 } }, 'float32')
    assert_list(g[1], { 0.6, 0 }, 1e-6)
    assert.is_false(H.GradientClipping(1).call_for_each_param)
    assert.matches('GradientClipping: threshold must be a number', err_of(H.GradientClipping, 'x'))
  end)

  it('GradientHardClipping clips each element', function()
    local g = run_hook(H.GradientHardClipping(-0.5, 1), { { 0, 0, 0, 0 } }, { { -3, -0.2, 0.7, 5 } })
    assert_list(g[1], { -0.5, -0.2, 0.7, 1 })
    assert.matches('lower_bound %(2%) must not exceed upper_bound %(1%)', err_of(H.GradientHardClipping, 2, 1))
    assert.are.equal(-1, H.GradientHardClipping{ lower_bound = -1, upper_bound = 1 }.lower_bound)
  end)

  it('GradientLARS scales by |p| / (eps + |g| + wd |p|) above the threshold', function()
    -- p = {3, 4} (|p| = 5), g = {0, 1} (|g| = 1), wd = 0.1:
    -- rate = 5 / (1e-9 + 1 + 0.5); g = rate * (g + 0.1 p)
    local rate = 5 / (1e-9 + 1 + 0.5)
    local g = run_hook(H.GradientLARS{ weight_decay = 0.1 }, { { 3, 4 } }, { { 0, 1 } })
    assert_list(g[1], { rate * 0.3, rate * 1.4 })
    -- |p| below the threshold: rate 1, only the decay term
    g = run_hook(H.GradientLARS(10, 0.1), { { 3, 4 } }, { { 0, 1 } })
    assert_list(g[1], { 0.3, 1.4 })
    local d = H.GradientLARS()
    assert.are.same({ 1e-2, 0, 1e-9 }, { d.threshold, d.weight_decay, d.eps })
  end)

  it('GradientNoise adds noise of variance eta / (1 + t)^0.55 (custom noise_func too)', function()
    local calls = {}
    local function fixed(xp, shape, dtype, hook, rule)
      calls[#calls + 1] = { hook.eta, rule.t, dtype }
      return xp.full(shape, 0.25, dtype)
    end
    local g = run_hook(H.GradientNoise(0.3, fixed), { { 0, 0 } }, { { 1, 2 } })
    assert_list(g[1], { 1.25, 2.25 })
    assert.are.same({ { 0.3, 0, 'float64' } }, calls)
    -- the default draws N(0, eta / (1 + t)^0.55): check the spread on many elements
    T.random.seed(3)
    local n = 20000
    local zeros = {}
    for i = 1, n do zeros[i] = 0 end
    g = run_hook(H.GradientNoise(1.0), { zeros }, { zeros })
    local s2 = 0
    for _, v in ipairs(g[1]) do s2 = s2 + v * v end
    local var = s2 / n   -- t = 0 at the hook: variance 1
    assert.is_true(math.abs(var - 1) < 0.05, 'variance ' .. var)
  end)

  it('hooks without a gradient or data do nothing', function()
    local p = chainer.Parameter()
    for _, h in ipairs({ H.WeightDecay(1), H.Lasso(1), H.GradientHardClipping(-1, 1), H.GradientLARS(),
      H.GradientNoise(1) }) do
      h(nil, p)
    end
    assert.is_nil(p.grad)
  end)
end)

describe('optimizer oracle (Chainer 7.8.1 trajectories)', function()
  local dir
  for _, d in ipairs({ '../shared/oracle/vectors-v2', '/work/shared/oracle/vectors-v2' }) do
    local f = io.open(d .. '/index.json', 'rb')
    if f then f:close(); dir = d; break end
  end
  if not dir then
    pending('oracle vectors not found (../shared/oracle/vectors-v2)')
    return
  end
  it('reproduces all 72 trajectories with per-step states and every hyperparameter', function()
    local oracle = require 'chainer.testing.oracle'
    local s = oracle.run(dir, { filter = 'opt/' })
    assert.are.same({}, s.failures)
    assert.are.equal(72, s.optimizers.total)
    assert.are.equal(72, s.optimizers.passed)
  end)
end)

-- distributions.Bernoulli and Categorical: probabilities against direct
-- formulas, gradients w.r.t. p and logit, sample frequencies, KL, bad input.
local chainer = require 'chainer'
local D, F, T = chainer.distributions, chainer.functions, chainer.tensor
local U = T.random.uniform
local function_spec = require 'chainer.testing.function_spec'
local S = require 'distributions._support'

local x01 = T.array({ { 1, 0 }, { 0, 1 }, { 1, 1 } }, 'float64')
local function bern_log(p, x) return x * T.log(p) + (1 - x) * T.log(1 - p) end

function_spec.describe('Bernoulli:log_prob (p)', {
  fn = function(p) return D.Bernoulli(p):log_prob(x01:astype(p.dtype)) end,
  inputs = function(dt) return { U(0.2, 0.8, { 3, 2 }, dt) } end,
  reference = function(p) return bern_log(p, x01:astype(p.dtype)) end,
})
function_spec.describe('Bernoulli:log_prob (logit)', {
  double_backward = true,
  fn = function(l) return D.Bernoulli(nil, l):log_prob(x01:astype(l.dtype)) end,
  inputs = function(dt) return { U(-2, 2, { 3, 2 }, dt) } end,
  reference = function(l) local p = 1 / (T.exp(-l) + 1); return bern_log(p, x01:astype(l.dtype)) end,
})
function_spec.describe('Bernoulli:prob', {
  double_backward = true,
  fn = function(p) return D.Bernoulli(p):prob(x01:astype(p.dtype)) end,
  inputs = function(dt) return { U(0.2, 0.8, { 3, 2 }, dt) } end,
  reference = function(p) return T.exp(bern_log(p, x01:astype(p.dtype))) end,
})
function_spec.describe('Bernoulli.entropy', {
  fn = function(p) return D.Bernoulli(p).entropy end,
  inputs = function(dt) return { U(0.1, 0.9, { 5 }, dt) } end,
  reference = function(p) return -(p * T.log(p) + (1 - p) * T.log(1 - p)) end,
})
function_spec.describe('Bernoulli.variance and stddev', {
  fn = function(p) local d = D.Bernoulli(p); return d.variance, d.stddev end,
  inputs = function(dt) return { U(0.1, 0.9, { 5 }, dt) } end,
  reference = function(p) return p * (1 - p), T.sqrt(p * (1 - p)) end,
})
function_spec.describe('kl_divergence(Bernoulli, Bernoulli)', {
  fn = function(p, q) return chainer.kl_divergence(D.Bernoulli(p), D.Bernoulli(q)) end,
  inputs = function(dt) return { U(0.1, 0.9, { 5 }, dt), U(0.1, 0.9, { 5 }, dt) } end,
  reference = function(p, q) return p * T.log(p / q) + (1 - p) * T.log((1 - p) / (1 - q)) end,
})

local probs = T.array({ { 0.2, 0.3, 0.5 }, { 0.6, 0.1, 0.3 } }, 'float64')
local labels = T.array({ { 2, 0 }, { 1, 1 }, { 0, 2 } }, 'int32')   -- (sample 3, batch 2)
local function pick(lp)
  local want = {}
  for s = 1, 3 do
    want[s] = {}
    for b = 1, 2 do want[s][b] = lp[b][labels:totable()[s][b] + 1] end
  end
  return want
end

function_spec.describe('Categorical:log_prob (logit, with a sample axis)', {
  double_backward = true,
  fn = function(l) return D.Categorical(nil, { logit = l }):log_prob(labels) end,
  inputs = function(dt) return { U(-1, 1, { 2, 3 }, dt) } end,
  reference = function(l)
    local lp = (l - T.logsumexp(l, { axis = 1, keepdims = true })):totable()
    return T.array(pick(lp), l.dtype)
  end,
})
function_spec.describe('Categorical.entropy', {
  double_backward = true,
  fn = function(p) return D.Categorical(p / F.sum(p, { axis = 1, keepdims = true }).array, { validate_args = false }).entropy end,
  inputs = function(dt) return { U(0.2, 1, { 2, 4 }, dt) } end,
  no_grads = { true },
  reference = function(p)
    local q = p / T.sum(p, { axis = 1, keepdims = true })
    return -T.sum(q * T.log(q), { axis = 1 })
  end,
})
function_spec.describe('kl_divergence(Categorical, Categorical) (logits)', {
  double_backward = true,
  fn = function(a, b) return chainer.kl_divergence(D.Categorical(nil, { logit = a }), D.Categorical(nil, { logit = b })) end,
  inputs = function(dt) return { U(-1, 1, { 2, 4 }, dt), U(-1, 1, { 2, 4 }, dt) } end,
  reference = function(a, b)
    local la = a - T.logsumexp(a, { axis = 1, keepdims = true })
    local lb = b - T.logsumexp(b, { axis = 1, keepdims = true })
    return T.sum(T.exp(la) * (la - lb), { axis = 1 })
  end,
})

describe('Bernoulli', function()
  it('draws 0/1 with frequency p', function()
    T.random.seed(5)
    local d = D.Bernoulli(T.array({ 0.1, 0.5, 0.9 }, 'float64'))
    local x = d:sample(40000)
    for _, v in ipairs(S.values(x)) do assert(v == 0 or v == 1) end
    S.moments(x, { 0.1, 0.5, 0.9 }, { 0.09, 0.25, 0.09 })
    assert.are.same({ 40000, 3 }, x.shape)
  end)

  it('knows its fields and binary_check', function()
    local d = D.Bernoulli(nil, T.array({ 0 }, 'float64'))
    S.near(d.p, 0.5, 1e-12)
    S.near(d.entropy, math.log(2), 1e-12)
    S.near(d.params.logit, 0, 0)
    local c = D.Bernoulli(T.array({ 0.3, 0.3 }, 'float64'), nil, true)
    local lp = S.values(c:log_prob(T.array({ 1, 0.5 }, 'float64')))
    assert(math.abs(lp[1] - math.log(0.3)) < 1e-12)
    assert.are.equal(-math.huge, lp[2])
    S.near(c:prob(T.array({ 1, 0.5 }, 'float64')), { 0.3, 0 }, 1e-12)
    -- without the check a non-binary x gives the formula's value
    S.near(D.Bernoulli(T.array({ 0.3 }, 'float64')):prob(T.array({ 0.5 }, 'float64')), 0.5, 1e-12)
  end)

  it('has entropy 0 at p = 0 and p = 1, with a zero gradient from the 0 log 0 term', function()
    local p = chainer.Variable(T.array({ 0, 1 }, 'float64'))
    local h = D.Bernoulli(p).entropy
    S.near(h, 0, 0)
    F.sum(h):backward()
    -- d/dp of -(p log p) - (1-p) log(1-p) with the 0 log 0 term's gradient
    -- taken as 0: at p = 0 only the second term counts, 1 + log 1 = 1
    S.near(p.grad, { 1, -1 }, 1e-12)
  end)

  it('rejects bad input', function()
    S.raises(function() D.Bernoulli(T.array({ 1.5 })) end, 'Bernoulli', 'p', '[0, 1]')
    S.raises(function() D.Bernoulli() end, 'either p or logit')
    S.raises(function() D.Bernoulli(T.array({ 0.5 }), T.array({ 0 })) end, 'not both')
    S.raises(function() D.Bernoulli(T.array({ 0.5 }), nil, 1) end, 'binary_check', 'boolean')
    S.raises(function() D.Bernoulli(T.array({ 0.5 }), { logits = 1 }) end, "unknown option 'logits'")
    S.raises(function() return D.Bernoulli(T.array({ 0.5 })).mode end, 'mode', 'not defined')
  end)
end)

describe('Categorical', function()
  it('gives log p of the chosen category and its entropy', function()
    local d = D.Categorical(probs)
    assert.are.same({ 2 }, d.batch_shape)
    assert.are.same({}, d.event_shape)
    local lp = T.log(probs):totable()
    S.near(d:log_prob(labels), T.array(pick(lp), 'float64'):reshape({ -1 }):totable(), 1e-12)
    S.near(d.entropy, { -(0.2 * math.log(0.2) + 0.3 * math.log(0.3) + 0.5 * math.log(0.5)),
      -(0.6 * math.log(0.6) + 0.1 * math.log(0.1) + 0.3 * math.log(0.3)) }, 1e-12)
  end)

  it('draws categories with frequencies p', function()
    T.random.seed(6)
    local x = D.Categorical(probs):sample(40000)
    assert.are.same({ 40000, 2 }, x.shape)
    assert.are.equal('int64', x.dtype)
    local onehot = {}
    for k = 0, 2 do onehot[k + 1] = T.eq(x.array, k):astype('float64') end
    for k = 1, 3 do
      local want = { probs:totable()[1][k], probs:totable()[2][k] }
      local var = { want[1] * (1 - want[1]), want[2] * (1 - want[2]) }
      S.moments(onehot[k], want, var, { rel_var = 0.1 })
    end
  end)

  it('has a KL that agrees with Monte Carlo and handles zero probabilities', function()
    T.random.seed(7)
    local q = D.Categorical(T.array({ { 0.25, 0.25, 0.5 }, { 0.3, 0.3, 0.4 } }, 'float64'))
    S.check_kl_mc(D.Categorical(probs), q, 40000)
    local z = D.Categorical(T.array({ { 0, 0.5, 0.5 } }, 'float64'))
    S.near(chainer.kl_divergence(z, D.Categorical(T.array({ { 0.2, 0.4, 0.4 } }, 'float64'))), math.log(1.25), 1e-12)
  end)

  it('rejects bad input', function()
    S.raises(function() D.Categorical(T.array({ 0.5, 0.6 })) end, 'Categorical', 'sum to 1')
    S.raises(function() D.Categorical(T.array({ -0.5, 1.5 })) end, 'p', '[0, 1]')
    S.raises(function() D.Categorical() end, 'either p or logit')
    S.raises(function() D.Categorical(T.array(0.5)) end, 'at least one axis')
    S.raises(function() D.Categorical(probs, { logits = 1 }) end, "unknown option 'logits'")
  end)
end)

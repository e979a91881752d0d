-- F.decorrelated_batch_normalization, F.fixed_decorrelated_batch_normalization,
-- F.fixed_batch_renormalization and L.DecorrelatedBatchNormalization
local chainer = require 'chainer'
local F = require 'chainer.functions'
local L = chainer.links
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local helpers = require 'helpers'
local close = helpers.close

-- x (b, c, s...) as (g, C, m) and back, with plain tensor moves.
local function to_groups(x, g)
  local s = x.shape
  local perm = { 1, 0 }
  for i = 2, #s - 1 do perm[#perm + 1] = i end
  local m = s[1]
  for i = 3, #s do m = m * s[i] end
  return x:transpose(perm):contiguous():reshape({ g, s[2] / g, m }), m
end
local function from_groups(y, shape)
  local mid = { shape[2], shape[1] }
  for i = 3, #shape do mid[#mid + 1] = shape[i] end
  local perm = { 1, 0 }
  for i = 2, #shape - 1 do perm[#perm + 1] = i end
  return y:reshape(mid):transpose(perm):contiguous()
end

-- A^-1/2 of a batch of SPD matrices by the Denman-Beavers iteration (no
-- eigen-decomposition, so independent of the implementation).
local function inv_sqrt(a)
  local y, z = a:astype('float64'), T.eye(a.shape[2], 'float64'):broadcast_to(a.shape):copy()
  for _ = 1, 60 do
    y, z = (y + T.inv(z)) * 0.5, (z + T.inv(y)) * 0.5
  end
  return z
end

local function zca_ref(x, g, eps)
  local xg, m = to_groups(x:astype('float64'), g)
  local xc = xg - T.mean(xg, { axis = 2, keepdims = true })
  local cov = T.matmul(xc, xc, { transb = true }) / m + T.eye(xg.shape[2], 'float64') * eps
  return from_groups(T.matmul(inv_sqrt(cov), xc), x.shape):astype(x.dtype)
end

function_spec.describe('F.decorrelated_batch_normalization', {
  fn = function(x, o) return F.decorrelated_batch_normalization(x, { groups = o.groups, eps = o.eps }) end,
  inputs = function(dt, o) return { T.random.randn(o.shape, dt) } end,
  reference = function(x, o) return zca_ref(x, o.groups, o.eps or 2e-5) end,
  forward_tol = { float32 = { atol = 1e-4, rtol = 1e-3 } },
  backward_tol = { float32 = { atol = 5e-3, rtol = 5e-2 } },
  cases = {
    { name = '2-d, one group', opts = { shape = { 6, 3 }, groups = 1 } },
    { name = '4-d, two groups', opts = { shape = { 5, 4, 2, 2 }, groups = 2 } },
    { name = '3-d, two groups of one, eps 1e-3', opts = { shape = { 4, 2, 3 }, groups = 2, eps = 1e-3 } },
  },
})

function_spec.describe('F.fixed_decorrelated_batch_normalization', {
  fn = function(x, mean, proj, o) return F.fixed_decorrelated_batch_normalization(x, mean, proj, o.groups) end,
  inputs = function(dt, o)
    local C = o.shape[2] / o.groups
    return { T.random.randn(o.shape, dt), T.random.randn({ o.groups, C }, dt), T.random.randn({ o.groups, C, C }, dt) }
  end,
  reference = function(x, mean, proj, o)
    local xg, m = to_groups(x, o.groups)
    local C = xg.shape[2]
    return from_groups(T.matmul(proj, xg - mean:reshape({ o.groups, C, 1 })), x.shape)
  end,
  double_backward = true,
  cases = {
    { name = '4-d, two groups', opts = { shape = { 3, 4, 2, 2 }, groups = 2 } },
    { name = '2-d, one group', opts = { shape = { 4, 3 }, groups = 1 } },
  },
})

function_spec.describe('F.fixed_batch_renormalization', {
  fn = function(x, g, b, mean, var) return F.fixed_batch_renormalization(x, g, b, mean, var, 1e-3) end,
  inputs = function(dt)
    return { T.random.randn({ 4, 3, 2 }, dt), T.random.uniform(0.5, 1.5, { 3 }, dt), T.random.randn({ 3 }, dt),
      T.random.randn({ 3 }, dt), T.random.uniform(0.5, 1.5, { 3 }, dt) }
  end,
  reference = function(x, g, b, mean, var)
    local function e(v) return v:reshape({ 1, 3, 1 }) end
    return (x - e(mean)) / T.sqrt(e(var) + 1e-3) * e(g) + e(b)
  end,
  double_backward = true,
})

describe('F.decorrelated_batch_normalization', function()
  it('whitens each group: zero mean, identity covariance (up to eps)', function()
    local x = T.random.randn({ 50, 6 }, 'float64') * T.array({ 1, 3, 0.5, 2, 1, 4 }, 'float64')
    local y = F.decorrelated_batch_normalization(x, { groups = 2, eps = 0 }).array
    local yg, m = to_groups(y, 2)
    close(T.mean(yg, { axis = 2 }), T.zeros({ 2, 3 }, 'float64'), 1e-12)
    close(T.matmul(yg, yg, { transb = true }) / m, T.eye(3, 'float64'):broadcast_to({ 2, 3, 3 }), 1e-10)
  end)

  it('updates running_mean and running_projection in place (unbiased projection)', function()
    local x = T.random.randn({ 5, 4, 2 }, 'float64')
    local rm, rp = T.ones({ 2, 2 }, 'float64'), T.eye(2, 'float64'):broadcast_to({ 2, 2, 2 }):copy()
    local rm0, rp0 = rm:copy(), rp:copy()
    F.decorrelated_batch_normalization(x, { groups = 2, running_mean = rm, running_projection = rp, decay = 0.8 })
    local xg, m = to_groups(x, 2)
    local mean = T.mean(xg, { axis = 2 })
    local xc = xg - mean:reshape({ 2, 2, 1 })
    local proj = inv_sqrt(T.matmul(xc, xc, { transb = true }) / m + T.eye(2, 'float64') * 2e-5)
    close(rm, rm0 * 0.8 + mean * 0.2, 1e-12)
    close(rp, rp0 * 0.8 + proj * (0.2 * m / (m - 1)), 1e-9)
  end)

  it('has no double backward, as in Chainer', function()
    local x = chainer.Variable(T.random.randn({ 6, 2 }, 'float64'))
    local y = F.decorrelated_batch_normalization(x, { groups = 1 })
    local gx = chainer.grad({ y }, { x }, { grad_outputs = { T.ones({ 6, 2 }, 'float64') },
      enable_double_backprop = true })[1]
    assert.has_error(function() chainer.grad({ F.sum(gx * gx) }, { x }) end,
      'decorrelated_batch_normalization: double backward is not supported (Chainer has none either)')
  end)

  it('rejects bad arguments with the function name', function()
    local x = T.zeros({ 4, 6 }, 'float64')
    assert.has_error(function() F.decorrelated_batch_normalization(x, { groups = 4 }) end,
      'decorrelated_batch_normalization: the channels of x (6) must be a multiple of groups (4)')
    assert.has_error(function() F.decorrelated_batch_normalization(T.zeros({ 4 }), { groups = 1 }) end,
      'decorrelated_batch_normalization: x must be at least 2-d (batch, channels, ...), got shape (4,)')
    assert.has_error(function() F.decorrelated_batch_normalization(x, { groups = 2, running_mean = T.zeros({ 3 }) }) end,
      'decorrelated_batch_normalization: running_mean must be a float tensor of shape (2, 3), got float32 (3,)')
    assert.has_error(function() F.decorrelated_batch_normalization(x, { group = 2 }) end)
    assert.has_error(function()
      F.fixed_decorrelated_batch_normalization(x, T.zeros({ 2, 3 }, 'float64'), T.zeros({ 2, 3 }, 'float64'), 2)
    end, 'fixed_decorrelated_batch_normalization: projection must be (groups, C, C) = (2, 3, 3), got (2, 3)')
    assert.has_error(function()
      F.fixed_decorrelated_batch_normalization(x, T.zeros({ 2, 3 }), T.zeros({ 2, 3, 3 }), 2)
    end, 'fixed_decorrelated_batch_normalization: x, mean and projection must have one dtype (got float64, float32, float32)')
    assert.has_error(function() F.fixed_batch_renormalization(x, T.ones({ 6 }), T.ones({ 6 }), T.ones({ 6 }),
      T.ones({ 6 }), -1) end, 'fixed_batch_renormalization: eps must be a non-negative number (got -1)')
  end)
end)

describe('L.DecorrelatedBatchNormalization', function()
  it('starts with zero means and identity projections in float32', function()
    local l = L.DecorrelatedBatchNormalization(4, 2)
    assert.are.same({ { 0, 0 }, { 0, 0 } }, l.avg_mean:totable())
    assert.are.same({ { { 1, 0 }, { 0, 1 } }, { { 1, 0 }, { 0, 1 } } }, l.avg_projection:totable())
    assert.are.equal('float32', l.avg_mean.dtype)
    assert.are.equal(0, #(function() local t = {}; for p in l:params() do t[#t + 1] = p end; return t end)())
  end)

  it('trains with batch statistics, then tests with its running averages', function()
    local l = L.DecorrelatedBatchNormalization(4, { groups = 2, decay = 0.5, dtype = 'float64' })
    local x = T.random.randn({ 6, 4 }, 'float64')
    local y = l(x)
    close(y, F.decorrelated_batch_normalization(x, { groups = 2 }), 1e-12)
    local xg = to_groups(x, 2)
    close(l.avg_mean, T.mean(xg, { axis = 2 }) * 0.5, 1e-12)
    local xt = T.random.randn({ 3, 4 }, 'float64')
    local yt = chainer.using_config('train', false, function() return l(xt) end)
    close(yt, F.fixed_decorrelated_batch_normalization(xt, l.avg_mean, l.avg_projection, 2), 1e-12)
  end)

  it('finetune averages over the calls since start_finetuning', function()
    local l = L.DecorrelatedBatchNormalization(2, 1, { dtype = 'float64' })
    local a, b = T.random.randn({ 5, 2 }, 'float64'), T.random.randn({ 5, 2 }, 'float64')
    l:start_finetuning()
    l(a, { finetune = true })
    l(b, { finetune = true })
    close(l.avg_mean, (T.mean(a, { axis = 0 }) + T.mean(b, { axis = 0 })):reshape({ 1, 2 }) * 0.5, 1e-12)
    assert.are.equal(2, l.N)
  end)

  it('rejects bad arguments', function()
    assert.has_error(function() L.DecorrelatedBatchNormalization(6, 4) end,
      'L.DecorrelatedBatchNormalization: size (6) must be a multiple of groups (4)')
    assert.has_error(function() L.DecorrelatedBatchNormalization(0) end,
      'L.DecorrelatedBatchNormalization: size must be a positive integer (got 0)')
    local l = L.DecorrelatedBatchNormalization(4, 2)
    assert.has_error(function() l(T.zeros({ 2, 4 }), { fine_tune = true }) end)
  end)
end)

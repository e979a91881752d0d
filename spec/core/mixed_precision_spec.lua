-- Mixed precision: chainer.config.dtype = 'mixed16' (float16 activations,
-- float32 for what the normalization links keep, as Chainer 7.8.1), the
-- float16 paths of batch and group normalization beside float32
-- parameters, and dynamic / static loss scaling on the optimizers.
local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local L = chainer.links
local testing = require 'chainer.testing'

local function in_mixed16(fn) return chainer.using_config('dtype', 'mixed16', fn) end

describe("config.dtype = 'mixed16'", function()
  it("reads back as 'mixed16'; get_dtype gives float16, or map_mixed16 when asked", function()
    in_mixed16(function()
      assert.are.equal('mixed16', chainer.config.dtype)
      assert.are.equal(chainer.mixed16, chainer.config.dtype)
      assert.are.equal('float16', chainer.get_dtype())
      assert.are.equal('float32', chainer.get_dtype(nil, 'float32'))
      assert.are.equal('float64', chainer.get_dtype(nil, { map_mixed16 = 'float64' }))
      assert.are.equal('float64', chainer.get_dtype('float64', 'float32'))
      assert.are.equal('float16', T.zeros({ 2 }).dtype)
    end)
    assert.are.equal('float32', chainer.config.dtype)
    assert.are.equal('float32', chainer.get_dtype(nil, 'float16'))   -- map_mixed16 only maps mixed16
    assert.are.equal('float32', chainer.get_dtype(chainer.mixed16, 'float32'))
    assert.has_error(function() chainer.config.dtype = 'mixed8' end,
      "config.dtype: expected 'float16', 'float32', 'float64' or 'mixed16' (got mixed8)")
  end)

  it("gives Linear float16 parameters and the normalization links float32 ones (Chainer's choice)", function()
    in_mixed16(function()
      local lin = L.Linear(3, 2)
      assert.are.equal('float16', lin.W.dtype)
      assert.are.equal('float16', lin.b.dtype)
      local bn = L.BatchNormalization(3)
      for _, a in ipairs({ bn.gamma.array, bn.beta.array, bn.avg_mean, bn.avg_var }) do
        assert.are.equal('float32', a.dtype)
      end
      assert.are.equal('float16', L.BatchNormalization(3, { dtype = 'float16' }).gamma.dtype)
      local gn = L.GroupNormalization(1, 4)
      assert.are.equal('float32', gn.gamma.dtype)
    end)
  end)

  it('trains a float16 MLP with batch normalization: float32 master copies, dynamic loss scaling', function()
    in_mixed16(function()
      T.random.seed(3)
      local model = chainer.Sequential(L.Linear(4, 8), L.BatchNormalization(8), F.relu, L.Linear(8, 2))
      local opt = chainer.optimizers.Adam(0.05)
      opt:use_fp32_update()
      opt:setup(model)
      opt:loss_scaling()
      -- two separable blobs
      local x = T.concatenate({ T.random.normal(-1, 0.5, { 16, 4 }), T.random.normal(1, 0.5, { 16, 4 }) }, 0)
        :astype('float16')
      local t = T.concatenate({ T.zeros({ 16 }, 'int32'), T.ones({ 16 }, 'int32') }, 0)
      local first, last
      for i = 1, 30 do
        local loss
        opt:update(function()
          loss = F.softmax_cross_entropy(model(x), t)
          return loss
        end)
        assert.are.equal('float16', loss.dtype)
        if i == 1 then first = loss.array:item() end
        last = loss.array:item()
      end
      assert.is_true(last < first / 4, string.format('loss %g -> %g', first, last))
      assert.are.equal('float16', model[1].W.dtype)
      assert.are.equal('float32', model[2].gamma.dtype)
      assert.is_true(opt._loss_scale > 1)
    end)
  end)
end)

describe('batch normalization with a float16 x and float32 parameters', function()
  -- by hand in float64: (x - mean) / sqrt(var + eps) * gamma + beta per channel
  local function reference(x, gamma, beta, eps)
    local xs = x:astype('float64')
    local mean = xs:mean({ axis = 0, keepdims = true })
    local var = ((xs - mean) ^ 2):mean({ axis = 0, keepdims = true })
    return (xs - mean) / (var + eps) ^ 0.5 * gamma:astype('float64') + beta:astype('float64'), mean, var
  end

  it('normalizes in float32, returns float16, and keeps the gradients of gamma and beta float32', function()
    T.random.seed(5)
    local x = chainer.Variable(T.random.normal(2, 3, { 6, 3 }):astype('float16'))
    local gamma = chainer.Variable(T.array({ 0.5, 1, 2 }, 'float32'))
    local beta = chainer.Variable(T.array({ -1, 0, 1 }, 'float32'))
    local rm, rv = T.zeros({ 3 }, 'float32'), T.ones({ 3 }, 'float32')
    local y = F.batch_normalization(x, gamma, beta, { running_mean = rm, running_var = rv })
    assert.are.equal('float16', y.dtype)
    local ref, mean, var = reference(x.array, gamma.array, beta.array, 2e-5)
    testing.assert_allclose(y.array, ref, { atol = 5e-3, rtol = 5e-3 })
    -- running averages in float32: 0.9 r + 0.1 batch (variance unbiased, m = 6)
    testing.assert_allclose(rm, mean:reshape({ 3 }) * 0.1, { atol = 1e-6, rtol = 1e-5 })
    testing.assert_allclose(rv, var:reshape({ 3 }) * (6 / 5) * 0.1 + 0.9, { atol = 1e-5, rtol = 1e-5 })
    F.sum(y * y):backward()
    assert.are.equal('float16', x.grad.dtype)
    assert.are.equal('float32', gamma.grad.dtype)
    assert.are.equal('float32', beta.grad.dtype)
    -- d/dbeta sum(y^2) = 2 sum(y) over the batch = 2 * 6 * beta (the normalized part sums to 0)
    testing.assert_allclose(beta.grad, beta.array * 12, { atol = 2e-2, rtol = 1e-2 })
  end)

  it('has double gradients matching finite differences (x and gy in float16)', function()
    T.random.seed(6)
    -- the finite differences run on float64 copies of all three
    local gamma = T.array({ 0.5, 1.5 }, 'float32')
    local beta = T.array({ 0.1, -0.2 }, 'float32')
    local function f16(shape) return T.random.uniform(-1, 1, shape):astype('float16') end
    chainer.gradient_check.check_double_backward(function(x, g, b) return F.batch_normalization(x, g, b) end,
      { f16({ 5, 2 }), gamma, beta }, { f16({ 5, 2 }) },
      { f16({ 5, 2 }), T.array({ 0.3, -0.7 }, 'float32'), T.array({ 0.2, 0.9 }, 'float32') }, nil,
      { atol = 5e-2, rtol = 5e-2 })
  end)

  it('in fixed_batch_normalization and group_normalization too', function()
    T.random.seed(7)
    local x = T.random.normal(0, 2, { 4, 2 }):astype('float16')
    local gamma, beta = T.array({ 2, 3 }, 'float32'), T.array({ 1, -1 }, 'float32')
    local mean, var = T.array({ 0.5, -0.5 }, 'float32'), T.array({ 4, 0.25 }, 'float32')
    local y = F.fixed_batch_normalization(x, gamma, beta, mean, var)
    assert.are.equal('float16', y.dtype)
    local x64 = x:astype('float64')
    local ref = (x64 - mean:astype('float64')) / (var:astype('float64') + 2e-5) ^ 0.5 * gamma:astype('float64')
      + beta:astype('float64')
    testing.assert_allclose(y.array, ref, { atol = 1e-2, rtol = 5e-3 })
    local g = F.group_normalization(T.random.normal(0, 1, { 2, 4, 3 }):astype('float16'), 2,
      T.ones({ 4 }, 'float32'), T.zeros({ 4 }, 'float32'))
    assert.are.equal('float16', g.dtype)
  end)

  it('refuses float16 parameters beside a float32 x, gamma and beta of two dtypes, and batch_renormalization mixed', function()
    local x32 = T.ones({ 2, 2 }, 'float32')
    assert.has_error(function() F.batch_normalization(x32, T.ones({ 2 }, 'float16'), T.zeros({ 2 }, 'float16')) end,
      'batch_normalization: gamma has dtype float16 but x has float32 (cast one with astype first)')
    local x16 = T.ones({ 2, 2 }, 'float16')
    assert.has_error(function() F.batch_normalization(x16, T.ones({ 2 }, 'float32'), T.zeros({ 2 }, 'float16')) end,
      'batch_normalization: beta has dtype float16 but gamma has float32 (cast one with astype first)')
    assert.has_error(function()
      F.batch_renormalization(x16, T.ones({ 2 }, 'float32'), T.zeros({ 2 }, 'float32'), 3, 5,
        T.zeros({ 2 }, 'float32'), T.ones({ 2 }, 'float32'))
    end)
  end)
end)

describe('loss scaling', function()
  -- One float32 parameter w; loss = sum(cast(w, float16) * 1000): its
  -- gradient is 1000, and 1000 * scale overflows float16 (max 65504) once
  -- the scale passes 65.5.
  local function one_param(lr)
    local link = chainer.Link()
    link:init_scope(function() link.w = chainer.Parameter(T.zeros({ 1 }, 'float32')) end)
    local opt = chainer.optimizers.SGD(lr):setup(link)
    local function lossfun() return F.sum(F.cast(link.w, 'float16') * 1000) end
    return link, opt, lossfun
  end

  it("dynamic: doubles until the first overflow, halves and skips on one, then grows 2^(1/interval) a step", function()
    local link, opt, lossfun = one_param(2 ^ -10)
    opt:loss_scaling(4)
    local step = 2 ^ -10 * 1000   -- one applied update: w -= lr * 1000
    -- worked out by hand: 1, 2, ..., 64 are clean; 128 overflows (skip,
    -- back to 64); 64 is clean (-> 64 * 2^0.25 = 76.1); 76.1 overflows
    -- (skip, -> 38.05); 38.05 is clean (-> 38.05 * 2^0.25)
    local scales = { 1, 2, 4, 8, 16, 32, 64, 128, 64, 64 * 2 ^ 0.25, 32 * 2 ^ 0.25 }
    local safe = { true, true, true, true, true, true, true, false, true, false, true }
    local applied = 0
    local stderr = io.stderr
    io.stderr = { write = function() end }   -- the overflow warnings
    for i = 1, #scales do
      assert.near(scales[i], opt._loss_scale, 1e-9)
      local ok = pcall(opt.update, opt, lossfun)
      if not ok then io.stderr = stderr end
      assert.is_true(ok)
      assert.are.equal(safe[i], opt:is_safe_to_update(), 'step ' .. i)
      if safe[i] then applied = applied + 1 end
      -- the gradient reaches the rule divided by the scale it was made with
      assert.near(-applied * step, link.w.array:item(), 1e-3)
    end
    io.stderr = stderr
    assert.near(32 * 2 ^ 0.5, opt._loss_scale, 1e-9)
  end)

  it('static: set_loss_scale scales the backward and the rule divides it out (a power of 2 is exact)', function()
    local a, oa, fa = one_param(0.01)
    local b, ob, fb = one_param(0.01)
    ob:set_loss_scale(32)   -- 32 * 1000 fits float16
    for _ = 1, 3 do
      oa:update(fa)
      ob:update(fb)
    end
    assert.are.equal(a.w.array:item(), b.w.array:item())
    assert.are.equal(32, ob._loss_scale)
    assert.is_true(ob:is_safe_to_update())
  end)

  it('backward{loss_scale = s}: gradients are s times larger and the parameter remembers s', function()
    local link, opt = one_param(1)
    local loss = F.sum(link.w * 3)
    loss:backward({ loss_scale = 8 })
    assert.are.equal(24, link.w.grad:item())
    assert.are.equal(8, link.w._loss_scale)
    opt:update()   -- gradient 24 / 8 = 3, lr 1
    assert.are.equal(-3, link.w.array:item())
  end)

  it('divides the float32 master copy under use_fp32_update', function()
    local link = chainer.Link()
    link:init_scope(function() link.w = chainer.Parameter(T.array({ 1 }, 'float16')) end)
    local opt = chainer.optimizers.SGD(0.5)
    opt:use_fp32_update()
    opt:setup(link)
    opt:set_loss_scale(256)
    opt:update(function() return F.sum(link.w * 2) end)
    assert.are.equal(0, link.w.array:item())   -- 1 - 0.5 * 2
  end)

  it("StandardUpdater's and ParallelUpdater's loss_scale train exactly as without (a power of 2)", function()
    local H = require 'training.helpers'
    local updaters = chainer.training.updaters
    local function train(make_updater, loss_scale)
      local model = H.model(1)
      local opt = chainer.optimizers.SGD(0.1):setup(model)
      local it = chainer.iterators.SerialIterator(H.problem(12, 0), 4, { shuffle = false })
      local u = make_updater(it, opt, loss_scale)
      for _ = 1, 3 do u:update() end
      return model, opt
    end
    local function standard(it, opt, s) return updaters.StandardUpdater(it, opt, { loss_scale = s }) end
    local function parallel(it, opt, s)
      return updaters.ParallelUpdater(it, opt, { devices = { main = -1, second = -1 }, loss_scale = s })
    end
    for _, make in ipairs({ standard, parallel }) do
      local plain = train(make, nil)
      local scaled, opt = train(make, 64)
      assert.are.equal(64, opt._loss_scale)   -- Chainer's: the updater sets the optimizers' scale
      for _, name in ipairs({ 'l1', 'l2' }) do
        local a, b = plain.predictor[name], scaled.predictor[name]
        assert.are.equal(0, (a.W.array - b.W.array):abs():max():item())
        assert.are.equal(0, (a.b.array - b.b.array):abs():max():item())
      end
    end
  end)

  it('refuses a scale or interval that is not positive', function()
    local _, opt = one_param(1)
    assert.has_error(function() opt:set_loss_scale(0) end,
      'Optimizer.set_loss_scale: loss_scale must be a positive number (got 0)')
    assert.has_error(function() opt:loss_scaling(nil, -2) end,
      'Optimizer.loss_scaling: scale must be a positive number (got -2)')
    assert.has_error(function() opt:loss_scaling(0) end,
      'Optimizer.loss_scaling: interval must be a number >= 1 (got 0)')
    assert.has_error(function() opt:loss_scaling({ intervall = 3 }) end)
  end)
end)

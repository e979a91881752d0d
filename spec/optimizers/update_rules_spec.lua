-- Specs for every optimizer's update: several steps against a plain-Lua
-- scalar reference of Chainer's formulas, float32 and float64, the fused
-- kernels' slow paths (float16, strided grads), 0-d and empty parameters,
-- and the C-level argument checks.
local chainer = require 'chainer'
local T = chainer.tensor
local O = require 'chainer.optimizers'
local Link = chainer.Link or require('chainer.link').Link
local lib = require 'chainer._lib'

local helpers = require 'helpers'
local err_of = helpers.err_of

local function model_with(values, dtype)
  local m = Link()
  local p = chainer.Parameter(T.array(values, dtype or 'float64'))
  m:add_param('w', p)
  return m, p
end

-- Fixed gradient sequence: 5 steps of 4 elements, signs and sizes mixed.
local P0 = { 0.5, -1.25, 2.0, 0.0 }
local GRADS = {
  { 0.3, -0.7, 1.1, 0.05 }, { -0.2, 0.4, 0.9, -0.6 }, { 0.8, -0.1, -0.5, 0.25 },
  { 0.1, 0.1, 0.3, -0.9 }, { -0.4, 0.6, 0.2, 0.45 },
}

-- Scalar references: step(state, p, g, t, hp) -> new p (state updated in place).
local ref = {}
function ref.SGD(s, p, g, t, h) return p - h.lr * g end
function ref.MomentumSGD(s, p, g, t, h)
  s.v = h.momentum * (s.v or 0) - h.lr * g
  return p + s.v
end
function ref.CorrectedMomentumSGD(s, p, g, t, h)
  s.v = h.momentum * (s.v or 0) - g
  return p + h.lr * s.v
end
function ref.NesterovAG(s, p, g, t, h)
  local mu = h.momentum
  s.v = mu * (s.v or 0) - h.lr * g
  return p + mu * mu * s.v - (1 + mu) * h.lr * g
end
function ref.AdaGrad(s, p, g, t, h)
  s.h = (s.h or 0) + g * g
  return p - h.lr * g / (math.sqrt(s.h) + h.eps)
end
function ref.AdaDelta(s, p, g, t, h)
  s.msg = h.rho * (s.msg or 0) + (1 - h.rho) * g * g
  local dx = math.sqrt(((s.msdx or 0) + h.eps) / (s.msg + h.eps)) * g
  s.msdx = h.rho * (s.msdx or 0) + (1 - h.rho) * dx * dx
  return p - dx
end
local function adam_like(s, p, g, t, h)
  s.m = (s.m or 0) + (1 - h.beta1) * (g - (s.m or 0))
  s.v = (s.v or 0) + (1 - h.beta2) * (g * g - (s.v or 0))
  local v = s.v
  if h.amsgrad then
    s.vhat = math.max(s.vhat or 0, s.v)
    v = s.vhat
  end
  local alpha_t = h.alpha * math.sqrt(1 - h.beta2 ^ t) / (1 - h.beta1 ^ t)
  local step = alpha_t / (math.sqrt(v) + h.eps)
  if h.adabound then
    local lower = h.final_lr * (1 - 1 / (h.gamma * t + 1))
    local upper = h.final_lr * (1 + 1 / (h.gamma * t))
    step = math.min(math.max(step, lower), upper)
  end
  return (1 - h.eta * h.weight_decay_rate) * p - h.eta * step * s.m
end
ref.Adam, ref.AdamW, ref.AMSGrad, ref.AdaBound, ref.AMSBound = adam_like, adam_like, adam_like, adam_like, adam_like
function ref.RMSprop(s, p, g, t, h)
  s.ms = h.alpha * (s.ms or 0) + (1 - h.alpha) * g * g
  local den = h.eps_inside_sqrt and math.sqrt(s.ms + h.eps) or (math.sqrt(s.ms) + h.eps)
  return p - h.lr * g / den
end
function ref.RMSpropGraves(s, p, g, t, h)
  s.n = h.alpha * (s.n or 0) + (1 - h.alpha) * g * g
  s.g = h.alpha * (s.g or 0) + (1 - h.alpha) * g
  s.delta = h.momentum * (s.delta or 0) - h.lr * g / math.sqrt(s.n - s.g * s.g + h.eps)
  return p + s.delta
end
function ref.SMORMS3(s, p, g, t, h)
  local mem = s.mem or 1
  local r = 1 / (mem + 1)
  s.g = (1 - r) * (s.g or 0) + r * g
  s.g2 = (1 - r) * (s.g2 or 0) + r * g * g
  local x = s.g * s.g / (s.g2 + h.eps)
  local np = p - g * math.min(x, h.lr) / (math.sqrt(s.g2) + h.eps)
  s.mem = 1 + mem * (1 - x)
  return np
end
function ref.MSVAG(s, p, g, t, h)
  local b = h.beta
  local bp = b ^ t
  local rho = ((1 - b) ^ 2) * (1 - bp ^ 2) / (((1 - bp) ^ 2) * (1 - b ^ 2))
  rho = math.min(rho, 0.9999)
  s.m = (s.m or 0) + (1 - b) * (g - (s.m or 0))
  s.v = (s.v or 0) + (1 - b) * (g * g - (s.v or 0))
  local mt, vt = s.m / (1 - bp), s.v / (1 - bp)
  local mt2 = mt * mt
  local sv = (vt - mt2) / (1 - rho)
  local f = mt2 / (mt2 + rho * sv)
  if f ~= f then f = 0 end
  f = math.min(math.max(f, 0), 1)
  return p - h.eta * (h.lr * mt * f + h.weight_decay_rate * p)
end

local setups = {
  { 'SGD', { lr = 0.1 } },
  { 'SGD', {} },
  { 'MomentumSGD', { lr = 0.05, momentum = 0.8 } },
  { 'CorrectedMomentumSGD', { lr = 0.05, momentum = 0.8 } },
  { 'NesterovAG', { lr = 0.05, momentum = 0.9 } },
  { 'AdaGrad', { lr = 0.1 } },
  { 'AdaDelta', { rho = 0.9, eps = 1e-5 } },
  { 'Adam', { alpha = 0.05 } },
  { 'Adam', { alpha = 0.05, amsgrad = true, weight_decay_rate = 0.1, eta = 0.5 } },
  { 'Adam', { alpha = 0.05, adabound = true, final_lr = 0.05, gamma = 0.1 } },
  { 'AdamW', { alpha = 0.05, weight_decay_rate = 0.2 } },
  { 'AMSGrad', { alpha = 0.05 } },
  { 'AdaBound', { alpha = 0.02, final_lr = 0.05, gamma = 0.1 } },
  { 'AMSBound', { alpha = 0.02, final_lr = 0.05, gamma = 0.1 } },
  { 'RMSprop', { lr = 0.05, alpha = 0.9 } },
  { 'RMSprop', { lr = 0.05, alpha = 0.9, eps = 1e-3, eps_inside_sqrt = true } },
  { 'RMSpropGraves', { lr = 0.01 } },
  { 'SMORMS3', { lr = 0.05 } },
  { 'MSVAG', { lr = 0.1, beta = 0.8, weight_decay_rate = 0.05 } },
}

local function run_reference(name, hp)
  local states, p = {}, {}
  for i = 1, #P0 do states[i] = {}; p[i] = P0[i] end
  local traj = {}
  for t = 1, #GRADS do
    for i = 1, #P0 do p[i] = ref[name](states[i], p[i], GRADS[t][i], t, hp) end
    traj[t] = { unpack(p) }
  end
  return traj, states
end

describe('optimizer updates', function()
  for _, case in ipairs(setups) do
    local name, given = case[1], case[2]
    for _, dtype in ipairs({ 'float64', 'float32' }) do
      it(string.format('%s %s matches the formula for 5 steps (%s)', name, dtype,
        next(given) and 'options' or 'defaults'), function()
        local opt = O[name](given)
        local hp = opt.hyperparam:get_dict()
        local traj, states = run_reference(name, hp)
        local m, p = model_with(P0, dtype)
        opt:setup(m)
        local tol = dtype == 'float64' and 1e-12 or 2e-5
        for t = 1, #GRADS do
          p.grad = T.array(GRADS[t], dtype)
          opt:update()
          local got = p.array:tolist()
          for i = 1, #P0 do
            local want = traj[t][i]
            assert(math.abs(got[i] - want) <= tol * (1 + math.abs(want)),
              string.format('%s step %d element %d: %.17g, expected %.17g', name, t, i, got[i], want))
          end
        end
        assert.are.equal(5, opt.t)
        assert.are.equal(5, p.update_rule.t)
        -- final states
        for key, tensor in pairs(p.update_rule.state) do
          local got = tensor:tolist()
          for i = 1, #P0 do
            local want = states[i][key]
            if key == 'vhat' or want ~= nil then
              assert(math.abs(got[i] - want) <= tol * (1 + math.abs(want)),
                string.format('%s state %s element %d: %.17g, expected %.17g', name, key, i, got[i], want))
            end
          end
        end
      end)
    end
  end

  it('runs float16 parameters through the float64 slow path', function()
    local m, p = model_with({ 0.5, -1.0, 2.0 }, 'float16')
    local opt = O.MomentumSGD{ lr = 0.25, momentum = 0.5 }:setup(m)
    p.grad = T.array({ 1, 2, -4 }, 'float16')
    opt:update()
    assert.are.same({ 0.25, -1.5, 3.0 }, p.array:tolist())
    assert.are.equal('float16', p.update_rule.state.v.dtype)
    p.grad = T.array({ 1, 2, -4 }, 'float16')
    opt:update()
    -- v = 0.5*v - 0.25*g
    assert.are.same({ -0.125, -2.25, 4.5 }, p.array:tolist())
  end)

  it('keeps a float32 master copy with use_fp32_update', function()
    local m, p = model_with({ 1.0 }, 'float16')
    local opt = O.SGD{ lr = 1e-4 }:setup(m)
    opt:use_fp32_update()
    for _ = 1, 10 do
      p.grad = T.array({ 1 }, 'float16')
      opt:update()
    end
    -- 1 - 1e-3 in float32, stored back as float16 (a lone float16 update of
    -- 1e-4 at 1.0 would round away: the spacing of float16 there is ~1e-3)
    local master = p.update_rule._fp32_param.array
    assert.are.equal('float32', master.dtype)
    assert.is_true(math.abs(master:item() - 0.999) < 1e-6)
    assert.are.equal('float16', p.dtype)
    local m2, p2 = model_with({ 1.0 }, 'float16')
    local opt2 = O.SGD{ lr = 1e-4 }:setup(m2)
    for _ = 1, 10 do
      p2.grad = T.array({ 1 }, 'float16')
      opt2:update()
    end
    assert.are.equal(1, p2.array:item())
  end)

  it('handles strided (transposed) gradients on the slow path', function()
    local m, p = model_with({ { 1, 2, 3 }, { 4, 5, 6 } }, 'float32')
    local opt = O.Adam{ alpha = 0.1 }:setup(m)
    local gt = T.array({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, 'float32'):transpose()
    p.grad = gt
    opt:update()
    -- first Adam step: m = 0.1 g, v = 0.001 g^2, alpha_t = 0.1*sqrt(0.001)/0.1
    -- -> step = alpha_t * m / (sqrt(v) + eps) ~= 0.1 * sign(g)
    local got = p.array:tolist()
    for i, v0 in ipairs({ 1, 2, 3, 4, 5, 6 }) do
      assert.is_true(math.abs(got[i] - (v0 - 0.1)) < 1e-5)
    end
  end)

  it('updates 0-d and empty parameters', function()
    local m = Link()
    local s = chainer.Parameter(T.array(2.0, 'float64'))
    local e = chainer.Parameter(T.zeros({ 0, 3 }, 'float64'))
    m:add_param('s', s)
    m:add_param('e', e)
    local opt = O.Adam{ alpha = 0.5 }:setup(m)
    s.grad = T.array(3.0, 'float64')
    e.grad = T.zeros({ 0, 3 }, 'float64')
    opt:update()
    assert.is_true(math.abs(s.array:item() - 1.5) < 1e-6)
    assert.are.same({ 0, 3 }, e.array.shape)
    assert.are.same({ 0, 3 }, e.update_rule.state.m.shape)
  end)

  it('MSVAG keeps a zero step for a zero gradient (0/0 factor is 0)', function()
    local m, p = model_with({ 1.0, -2.0 }, 'float64')
    local opt = O.MSVAG{ lr = 0.1 }:setup(m)
    p.grad = T.array({ 0, 0 }, 'float64')
    opt:update()
    assert.are.same({ 1.0, -2.0 }, p.array:tolist())
  end)

  it('reports Adam alpha_t and AdaBound bounds', function()
    local m, p = model_with({ 1.0 }, 'float64')
    local opt = O.Adam{ alpha = 0.1, adabound = true, final_lr = 0.2, gamma = 0.5 }:setup(m)
    assert.matches('not been started', err_of(function() return opt.alpha_t end))
    p.grad = T.array({ 1 }, 'float64')
    opt:update()
    opt:update()
    local want = 0.1 * math.sqrt(1 - 0.999 ^ 2) / (1 - 0.9 ^ 2)
    assert.is_true(math.abs(opt.alpha_t - want) < 1e-15)
    assert.is_true(math.abs(opt.lr - want) < 1e-15)
    assert.is_true(math.abs(p.update_rule.alpha_t - want) < 1e-15)
    local b = p.update_rule.bounds
    assert.is_true(math.abs(b[1] - 0.2 * (1 - 1 / 2)) < 1e-15)
    assert.is_true(math.abs(b[2] - 0.2 * (1 + 1 / 1)) < 1e-15)
    -- final_lr follows alpha
    opt.alpha = 0.05
    b = p.update_rule.bounds
    assert.is_true(math.abs(b[1] - 0.1 * 0.5) < 1e-15)
    assert.matches('read%-only', err_of(function() opt.lr = 1 end))
  end)

  it('C kernels check their arguments', function()
    local C, check = lib.C, lib.check
    local p = T.zeros({ 2, 3 }, 'float32')
    local g = T.zeros({ 3, 2 }, 'float32')
    local e = err_of(function() check(C.ch_sgd_update(p.ptr, g.ptr, 0.1)) end)
    assert.matches('sgd_update', e)
    assert.matches('grad has shape %(3, 2%)', e)
    local ip = T.zeros({ 2 }, 'int32')
    e = err_of(function() check(C.ch_sgd_update(ip.ptr, ip.ptr, 0.1)) end)
    assert.matches('param must be a float tensor', e)
    local v = T.zeros({ 2, 3 }, 'float32')
    e = err_of(function() check(C.ch_momentum_sgd_update(p.ptr, v.ptr, nil, 0.1, 0.9)) end)
    assert.matches('momentum_sgd_update: state 1 is NULL', e)
    e = err_of(function() check(C.ch_momentum_sgd_update(p.ptr, v.ptr, p.ptr, 0.1, 0.9)) end)
    assert.matches('shares its memory', e)
    e = err_of(function() check(C.ch_grad_transform(p.ptr, nil, 1, 0, 0, 1, -1)) end)
    assert.matches('grad_transform: lower', e)
  end)

  it('sqnorm is exact on large inputs and independent of the thread count', function()
    local C = lib.C
    local ffi = require 'ffi'
    local x = T.random.uniform(-1, 1, { 100003 }, 'float32')
    local out = ffi.new('double[1]')
    local before = chainer.get_num_threads()
    chainer.set_num_threads(1)
    assert.are.equal(0, tonumber(C.ch_sqnorm(x.ptr, out)))
    local one = out[0]
    chainer.set_num_threads(2)
    C.ch_sqnorm(x.ptr, out)
    chainer.set_num_threads(before)
    assert.are.equal(one, out[0])
    local want = 0
    for _, v in ipairs(x:tolist()) do want = want + v * v end
    assert.is_true(math.abs(one - want) < 1e-9 * want)
  end)
end)

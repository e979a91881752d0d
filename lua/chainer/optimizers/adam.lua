-- optimizers/adam.lua: Adam, with Chainer's options
--   weight_decay_rate (+ eta): decoupled weight decay (AdamW),
--   amsgrad: the AMSGrad maximum of the second moment (state vhat),
--   adabound (+ final_lr, gamma): AdaBound's bounds on the step size.
-- m += (1-beta1)(g-m); v += (1-beta2)(g^2-v);
-- p = (1-eta*wd)*p - eta*clip(alpha_t/(sqrt(v)+eps), lower, upper)*m,
-- alpha_t = alpha*sqrt(1-beta2^t)/(1-beta1^t), t the rule's update count.
local optimizer = require 'chainer.optimizer'
local T = require 'chainer.tensor'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local names = { 'alpha', 'beta1', 'beta2', 'eps', 'eta', 'weight_decay_rate', 'amsgrad', 'adabound',
  'final_lr', 'gamma' }
local defaults = { alpha = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, eta = 1.0, weight_decay_rate = 0,
  amsgrad = false, adabound = false, final_lr = 0.1, gamma = 1e-3 }

local function learning_rate(hp, t, who)
  if t == 0 then
    error(who .. ": can't determine the learning rate of Adam because the update steps have not been started", 3)
  end
  local fix1 = 1 - hp.beta1 ^ t
  local fix2 = 1 - hp.beta2 ^ t
  return hp.alpha * math.sqrt(fix2) / fix1
end

local AdamRule = optimizer.rule_class('AdamRule', names, defaults)

function AdamRule:init(...)
  optimizer.UpdateRule.init(self, ...)
  if self.hyperparam.adabound then self.initial_alpha = self.hyperparam.alpha end
end

function AdamRule:init_state(param)
  local d = param._data
  self.state.m = T.zeros_like(d)
  self.state.v = T.zeros_like(d)
  if self.hyperparam.amsgrad then self.state.vhat = T.zeros_like(d) end
end

-- alpha_t: the bias-corrected step size of the current update.
function AdamRule.__props.alpha_t(self) return learning_rate(self.hyperparam, self.t, 'AdamRule.alpha_t') end
AdamRule.__props.lr = AdamRule.__props.alpha_t

-- AdaBound's (lower, upper) step bounds as a table {lower, upper}; final_lr
-- follows changes of alpha (as extensions make them).
local function bounds(self)
  if self.t == 0 then
    error("AdamRule.bounds: can't determine the bounds of AdaBound because the update steps have not been started", 3)
  end
  local hp = self.hyperparam
  local initial = rawget(self, 'initial_alpha') or hp.alpha
  local final_lr = hp.final_lr * hp.alpha / initial
  return final_lr * (1 - 1 / (hp.gamma * self.t + 1)), final_lr * (1 + 1 / (hp.gamma * self.t))
end
function AdamRule.__props.bounds(self) return { bounds(self) } end

AdamRule.is_elementwise = true   -- Chainer's flag: the update is elementwise

function AdamRule:update_core_cpu(param)
  local hp, st = self.hyperparam, self.state
  local data = param._data
  local eps = hp.eps
  if eps ~= 0 and math.abs(eps) < 1.4e-45 and data.dtype ~= 'float64' then
    error(string.format('Adam: eps is too small for float32 (%g)', eps), 3)
  end
  local vhat = nil
  if hp.amsgrad then
    if st.vhat == nil then st.vhat = T.zeros_like(data) end
    vhat = st.vhat.ptr
  end
  local alpha_t = learning_rate(hp, self.t, 'Adam')
  local bounded, lower, upper = 0, 0, 0
  if hp.adabound then
    if rawget(self, 'initial_alpha') == nil then self.initial_alpha = hp.alpha end
    bounded = 1
    lower, upper = bounds(self)
  end
  check(C.ch_adam_update(data.ptr, param.grad.ptr, st.m.ptr, st.v.ptr, vhat, alpha_t, hp.beta1, hp.beta2, eps,
    hp.eta, hp.weight_decay_rate, bounded, lower, upper), 3)
end

local Adam = optimizer.gradient_method('Adam', AdamRule, names)

-- opt.alpha_t: the step size of the latest update (t >= 1); opt.lr is
-- Chainer's deprecated alias for it (read-only: set alpha instead).
function Adam.__props.alpha_t(self) return learning_rate(self.hyperparam, self.t, 'Adam.alpha_t') end
Adam.__props.lr = Adam.__props.alpha_t

return { Adam = Adam, AdamRule = AdamRule, names = names, learning_rate = learning_rate }

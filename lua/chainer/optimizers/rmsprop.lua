-- optimizers/rmsprop.lua: Hinton's RMSprop, ms = alpha*ms + (1-alpha)*g^2;
-- p -= lr*g/(sqrt(ms)+eps) (eps inside the root with eps_inside_sqrt).
local optimizer = require 'chainer.optimizer'
local T = require 'chainer.tensor'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local names = { 'lr', 'alpha', 'eps', 'eps_inside_sqrt' }
local RMSpropRule = optimizer.rule_class('RMSpropRule', names,
  { lr = 0.01, alpha = 0.99, eps = 1e-8, eps_inside_sqrt = false })

function RMSpropRule:init_state(param)
  self.state.ms = T.zeros_like(param._data)
end

RMSpropRule.is_elementwise = true   -- Chainer's flag: the update is elementwise

function RMSpropRule:update_core_cpu(param)
  local hp = self.hyperparam
  local eps = hp.eps
  if eps == 0 then error('RMSprop: eps must be positive (got 0)', 3) end
  check(C.ch_rmsprop_update(param._data.ptr, param.grad.ptr, self.state.ms.ptr, hp.lr, hp.alpha, eps,
    hp.eps_inside_sqrt and 1 or 0), 3)
end

local RMSprop = optimizer.gradient_method('RMSprop', RMSpropRule, names)

return { RMSprop = RMSprop, RMSpropRule = RMSpropRule }

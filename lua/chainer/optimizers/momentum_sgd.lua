-- optimizers/momentum_sgd.lua: classical momentum, v = momentum*v - lr*g; p += v.
--   optimizers.MomentumSGD{lr = 0.01, momentum = 0.9}
local optimizer = require 'chainer.optimizer'
local T = require 'chainer.tensor'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local MomentumSGDRule = optimizer.rule_class('MomentumSGDRule', { 'lr', 'momentum' },
  { lr = 0.01, momentum = 0.9 })

function MomentumSGDRule:init_state(param)
  self.state.v = T.zeros_like(param._data)
end

MomentumSGDRule.is_elementwise = true   -- Chainer's flag: the update is elementwise

function MomentumSGDRule:update_core_cpu(param)
  local hp = self.hyperparam
  check(C.ch_momentum_sgd_update(param._data.ptr, param.grad.ptr, self.state.v.ptr, hp.lr, hp.momentum), 3)
end

local MomentumSGD = optimizer.gradient_method('MomentumSGD', MomentumSGDRule, { 'lr', 'momentum' })

return { MomentumSGD = MomentumSGD, MomentumSGDRule = MomentumSGDRule }

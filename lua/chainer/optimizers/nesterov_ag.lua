-- optimizers/nesterov_ag.lua: Nesterov's accelerated gradient in Chainer's
-- form, v = mu*v - lr*g; p += mu^2*v - (1+mu)*lr*g.
local optimizer = require 'chainer.optimizer'
local T = require 'chainer.tensor'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local NesterovAGRule = optimizer.rule_class('NesterovAGRule', { 'lr', 'momentum' },
  { lr = 0.01, momentum = 0.9 })

function NesterovAGRule:init_state(param)
  self.state.v = T.zeros_like(param._data)
end

NesterovAGRule.is_elementwise = true   -- Chainer's flag: the update is elementwise

function NesterovAGRule:update_core_cpu(param)
  local hp = self.hyperparam
  check(C.ch_nesterov_ag_update(param._data.ptr, param.grad.ptr, self.state.v.ptr, hp.lr, hp.momentum), 3)
end

local NesterovAG = optimizer.gradient_method('NesterovAG', NesterovAGRule, { 'lr', 'momentum' })

return { NesterovAG = NesterovAG, NesterovAGRule = NesterovAGRule }

-- optimizers/ada_grad.lua: AdaGrad, h += g^2; p -= lr*g/(sqrt(h)+eps).
local optimizer = require 'chainer.optimizer'
local T = require 'chainer.tensor'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local AdaGradRule = optimizer.rule_class('AdaGradRule', { 'lr', 'eps' }, { lr = 0.001, eps = 1e-8 })

function AdaGradRule:init_state(param)
  self.state.h = T.zeros_like(param._data)
end

AdaGradRule.is_elementwise = true   -- Chainer's flag: the update is elementwise

function AdaGradRule:update_core_cpu(param)
  local hp = self.hyperparam
  check(C.ch_adagrad_update(param._data.ptr, param.grad.ptr, self.state.h.ptr, hp.lr, hp.eps), 3)
end

local AdaGrad = optimizer.gradient_method('AdaGrad', AdaGradRule, { 'lr', 'eps' })

return { AdaGrad = AdaGrad, AdaGradRule = AdaGradRule }

-- optimizers/corrected_momentum_sgd.lua: momentum with the learning rate
-- applied after accumulation (Goyal et al.), v = momentum*v - g; p += lr*v,
-- so changing lr does not rescale the accumulated velocity.
local optimizer = require 'chainer.optimizer'
local T = require 'chainer.tensor'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local CorrectedMomentumSGDRule = optimizer.rule_class('CorrectedMomentumSGDRule', { 'lr', 'momentum' },
  { lr = 0.01, momentum = 0.9 })

function CorrectedMomentumSGDRule:init_state(param)
  self.state.v = T.zeros_like(param._data)
end

CorrectedMomentumSGDRule.is_elementwise = true   -- Chainer's flag: the update is elementwise

function CorrectedMomentumSGDRule:update_core_cpu(param)
  local hp = self.hyperparam
  check(C.ch_corrected_momentum_sgd_update(param._data.ptr, param.grad.ptr, self.state.v.ptr, hp.lr,
    hp.momentum), 3)
end

local CorrectedMomentumSGD = optimizer.gradient_method('CorrectedMomentumSGD', CorrectedMomentumSGDRule,
  { 'lr', 'momentum' })

return { CorrectedMomentumSGD = CorrectedMomentumSGD, CorrectedMomentumSGDRule = CorrectedMomentumSGDRule }

-- optimizers/ada_delta.lua: Zeiler's AdaDelta (states msg and msdx).
local optimizer = require 'chainer.optimizer'
local T = require 'chainer.tensor'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local AdaDeltaRule = optimizer.rule_class('AdaDeltaRule', { 'rho', 'eps' }, { rho = 0.95, eps = 1e-6 })

function AdaDeltaRule:init_state(param)
  self.state.msg = T.zeros_like(param._data)
  self.state.msdx = T.zeros_like(param._data)
end

AdaDeltaRule.is_elementwise = true   -- Chainer's flag: the update is elementwise

function AdaDeltaRule:update_core_cpu(param)
  local hp, st = self.hyperparam, self.state
  check(C.ch_adadelta_update(param._data.ptr, param.grad.ptr, st.msg.ptr, st.msdx.ptr, hp.rho, hp.eps), 3)
end

local AdaDelta = optimizer.gradient_method('AdaDelta', AdaDeltaRule, { 'rho', 'eps' })

return { AdaDelta = AdaDelta, AdaDeltaRule = AdaDeltaRule }

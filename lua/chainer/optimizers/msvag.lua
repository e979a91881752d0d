-- optimizers/msvag.lua: M-SVAG (Balles & Hennig), with AdamW-style decoupled
-- weight decay.  States m, v; beta^t is kept on the rule (beta_power).
local optimizer = require 'chainer.optimizer'
local T = require 'chainer.tensor'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local names = { 'lr', 'beta', 'eta', 'weight_decay_rate' }
local MSVAGRule = optimizer.rule_class('MSVAGRule', names,
  { lr = 0.1, beta = 0.9, eta = 1.0, weight_decay_rate = 0 })

function MSVAGRule:init(...)
  optimizer.UpdateRule.init(self, ...)
  self.beta_power = self.hyperparam.beta
end

function MSVAGRule:init_state(param)
  self.state.m = T.zeros_like(param._data)
  self.state.v = T.zeros_like(param._data)
end

MSVAGRule.is_elementwise = true   -- Chainer's flag: the update is elementwise

function MSVAGRule:update_core_cpu(param)
  local hp, st = self.hyperparam, self.state
  local beta, bp = hp.beta, self.beta_power
  local rho = ((1 - beta) ^ 2) * (1 - bp ^ 2) / (((1 - bp) ^ 2) * (1 - beta ^ 2))
  if rho > 0.9999 then rho = 0.9999 end
  check(C.ch_msvag_update(param._data.ptr, param.grad.ptr, st.m.ptr, st.v.ptr, hp.lr, beta, bp, rho,
    hp.eta, hp.weight_decay_rate), 3)
  self.beta_power = bp * beta
end

local MSVAG = optimizer.gradient_method('MSVAG', MSVAGRule, names)

return { MSVAG = MSVAG, MSVAGRule = MSVAGRule }

-- optimizers/msvag.lua: M-SVAG (Balles & Hennig), with AdamW-style decoupled
-- weight decay.  States m, v; beta^t is kept on the rule (beta_power).
local optimizer = require 'chainer.optimizer'
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

local M = elementwise.define('MSVAG', { 'lr', 'beta', 'eta', 'weight_decay_rate' },
  { lr = 0.1, beta = 0.9, eta = 1.0, weight_decay_rate = 0 }, {
  state = { 'm', 'v' },
  update = function(param, st, hp, rule)
    local beta, bp = hp.beta, rule.beta_power
    local rho = ((1 - beta) ^ 2) * (1 - bp ^ 2) / (((1 - bp) ^ 2) * (1 - beta ^ 2))
    if rho > 0.9999 then rho = 0.9999 end
    local status = C.ch_msvag_update(param._data.ptr, param.grad.ptr, st.m.ptr, st.v.ptr, hp.lr, beta, bp, rho,
      hp.eta, hp.weight_decay_rate)
    if status == 0 then rule.beta_power = bp * beta end
    return status
  end,
})

function M.MSVAGRule:init(...)
  optimizer.UpdateRule.init(self, ...)
  self.beta_power = self.hyperparam.beta
end

return M

-- optimizers/smorms3.lua: Simon Funk's SMORMS3 (states mem, g, g2).
local optimizer = require 'chainer.optimizer'
local T = require 'chainer.tensor'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local SMORMS3Rule = optimizer.rule_class('SMORMS3Rule', { 'lr', 'eps' }, { lr = 0.001, eps = 1e-16 })

function SMORMS3Rule:init_state(param)
  local d = param._data
  self.state.mem = T.ones_like(d)
  self.state.g = T.zeros_like(d)
  self.state.g2 = T.zeros_like(d)
end

SMORMS3Rule.is_elementwise = true   -- Chainer's flag: the update is elementwise

function SMORMS3Rule:update_core_cpu(param)
  local hp, st = self.hyperparam, self.state
  check(C.ch_smorms3_update(param._data.ptr, param.grad.ptr, st.mem.ptr, st.g.ptr, st.g2.ptr, hp.lr, hp.eps), 3)
end

local SMORMS3 = optimizer.gradient_method('SMORMS3', SMORMS3Rule, { 'lr', 'eps' })

return { SMORMS3 = SMORMS3, SMORMS3Rule = SMORMS3Rule }

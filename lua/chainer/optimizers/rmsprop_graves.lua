-- optimizers/rmsprop_graves.lua: Alex Graves's RMSprop (centred second
-- moment, momentum on the step; eps inside the root).  States n, g, delta.
local optimizer = require 'chainer.optimizer'
local T = require 'chainer.tensor'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local names = { 'lr', 'alpha', 'momentum', 'eps' }
local RMSpropGravesRule = optimizer.rule_class('RMSpropGravesRule', names,
  { lr = 1e-4, alpha = 0.95, momentum = 0.9, eps = 1e-4 })

function RMSpropGravesRule:init_state(param)
  local d = param._data
  self.state.n = T.zeros_like(d)
  self.state.g = T.zeros_like(d)
  self.state.delta = T.zeros_like(d)
end

RMSpropGravesRule.is_elementwise = true   -- Chainer's flag: the update is elementwise

function RMSpropGravesRule:update_core_cpu(param)
  local hp, st = self.hyperparam, self.state
  check(C.ch_rmsprop_graves_update(param._data.ptr, param.grad.ptr, st.n.ptr, st.g.ptr, st.delta.ptr,
    hp.lr, hp.alpha, hp.momentum, hp.eps), 3)
end

local RMSpropGraves = optimizer.gradient_method('RMSpropGraves', RMSpropGravesRule, names)

return { RMSpropGraves = RMSpropGraves, RMSpropGravesRule = RMSpropGravesRule }

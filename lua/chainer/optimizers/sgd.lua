-- optimizers/sgd.lua: vanilla stochastic gradient descent, p -= lr * g.
--   optimizers.SGD{lr = 0.01} / optimizers.SGD(0.01)
local optimizer = require 'chainer.optimizer'
local lib = require 'chainer._lib'
local C, check = lib.C, lib.check

local SGDRule = optimizer.rule_class('SGDRule', { 'lr' }, { lr = 0.01 })

SGDRule.is_elementwise = true   -- Chainer's flag: the update is elementwise

function SGDRule:update_core_cpu(param)
  check(C.ch_sgd_update(param._data.ptr, param.grad.ptr, self.hyperparam.lr), 3)
end

local SGD = optimizer.gradient_method('SGD', SGDRule, { 'lr' })

return { SGD = SGD, SGDRule = SGDRule }

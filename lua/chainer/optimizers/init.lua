-- chainer.optimizers: every optimizer and its update rule.
--   local optimizers = require 'chainer.optimizers'
--   local opt = optimizers.MomentumSGD{lr = 0.01, momentum = 0.9}:setup(model)
-- optimizers.hooks is chainer.optimizer_hooks.
local M = {}
local files = { 'sgd', 'momentum_sgd', 'corrected_momentum_sgd', 'nesterov_ag', 'ada_grad', 'ada_delta',
  'adam', 'adam_w', 'ams_grad', 'ada_bound', 'ams_bound', 'rmsprop', 'rmsprop_graves', 'smorms3', 'msvag' }
for _, f in ipairs(files) do
  for k, v in pairs(require('chainer.optimizers.' .. f)) do
    if type(v) == 'table' and rawget(v, '__name') then M[k] = v end
  end
end
M.hooks = require 'chainer.optimizer_hooks'
local optimizer = require 'chainer.optimizer'
M.Optimizer = optimizer.Optimizer
M.GradientMethod = optimizer.GradientMethod
M.UpdateRule = optimizer.UpdateRule
M.Hyperparameter = optimizer.Hyperparameter
return M

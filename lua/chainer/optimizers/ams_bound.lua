-- optimizers/ams_bound.lua: AMSBound, Adam with amsgrad and adabound.
local optimizer = require 'chainer.optimizer'
local adam = require 'chainer.optimizers.adam'

local AMSBound = optimizer.gradient_method('AMSBound', adam.AdamRule,
  { 'alpha', 'beta1', 'beta2', 'final_lr', 'gamma', 'eps', 'eta' }, nil, { amsgrad = true, adabound = true },
  adam.Adam)

return { AMSBound = AMSBound }

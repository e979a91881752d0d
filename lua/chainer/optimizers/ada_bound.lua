-- optimizers/ada_bound.lua: AdaBound, Adam with adabound = true: the step
-- size is clipped into bounds that converge to final_lr at speed gamma.
local optimizer = require 'chainer.optimizer'
local adam = require 'chainer.optimizers.adam'

local AdaBound = optimizer.gradient_method('AdaBound', adam.AdamRule,
  { 'alpha', 'beta1', 'beta2', 'final_lr', 'gamma', 'eps', 'eta' }, nil, { amsgrad = false, adabound = true },
  adam.Adam)

return { AdaBound = AdaBound }

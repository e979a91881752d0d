-- optimizers/adam_w.lua: AdamW, Adam with decoupled weight decay
-- (weight_decay_rate, eta).  A special case of optimizers.Adam.
local optimizer = require 'chainer.optimizer'
local adam = require 'chainer.optimizers.adam'

local AdamW = optimizer.gradient_method('AdamW', adam.AdamRule,
  { 'alpha', 'beta1', 'beta2', 'eps', 'eta', 'weight_decay_rate' }, nil, nil, adam.Adam)

return { AdamW = AdamW }

-- optimizers/momentum_sgd.lua: classical momentum, v = momentum*v - lr*g; p += v.
--   optimizers.MomentumSGD{lr = 0.01, momentum = 0.9}
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise.momentum('MomentumSGD', C.ch_momentum_sgd_update)

-- optimizers/corrected_momentum_sgd.lua: momentum with the learning rate
-- applied after accumulation (Goyal et al.), v = momentum*v - g; p += lr*v,
-- so changing lr does not rescale the accumulated velocity.
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise.momentum('CorrectedMomentumSGD', C.ch_corrected_momentum_sgd_update)

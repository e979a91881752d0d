-- optimizers/nesterov_ag.lua: Nesterov's accelerated gradient in Chainer's
-- form, v = mu*v - lr*g; p += mu^2*v - (1+mu)*lr*g.
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise.momentum('NesterovAG', C.ch_nesterov_ag_update)

-- optimizers/sgd.lua: vanilla stochastic gradient descent, p -= lr * g.
--   optimizers.SGD{lr = 0.01} / optimizers.SGD(0.01)
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise.define('SGD', { 'lr' }, { lr = 0.01 }, {
  update = function(param, _, hp) return C.ch_sgd_update(param._data.ptr, param.grad.ptr, hp.lr) end,
})

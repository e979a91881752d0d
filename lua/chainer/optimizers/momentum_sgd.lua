-- optimizers/momentum_sgd.lua: classical momentum, v = momentum*v - lr*g; p += v.
--   optimizers.MomentumSGD{lr = 0.01, momentum = 0.9}
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise('MomentumSGD', { 'lr', 'momentum' }, { lr = 0.01, momentum = 0.9 }, {
  state = { 'v' },
  update = function(param, st, hp)
    return C.ch_momentum_sgd_update(param._data.ptr, param.grad.ptr, st.v.ptr, hp.lr, hp.momentum)
  end,
})

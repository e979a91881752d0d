-- optimizers/nesterov_ag.lua: Nesterov's accelerated gradient in Chainer's
-- form, v = mu*v - lr*g; p += mu^2*v - (1+mu)*lr*g.
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise('NesterovAG', { 'lr', 'momentum' }, { lr = 0.01, momentum = 0.9 }, {
  state = { 'v' },
  update = function(param, st, hp)
    return C.ch_nesterov_ag_update(param._data.ptr, param.grad.ptr, st.v.ptr, hp.lr, hp.momentum)
  end,
})

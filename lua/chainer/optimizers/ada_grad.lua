-- optimizers/ada_grad.lua: AdaGrad, h += g^2; p -= lr*g/(sqrt(h)+eps).
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise.define('AdaGrad', { 'lr', 'eps' }, { lr = 0.001, eps = 1e-8 }, {
  state = { 'h' },
  update = function(param, st, hp)
    return C.ch_adagrad_update(param._data.ptr, param.grad.ptr, st.h.ptr, hp.lr, hp.eps)
  end,
})

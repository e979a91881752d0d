-- optimizers/corrected_momentum_sgd.lua: momentum with the learning rate
-- applied after accumulation (Goyal et al.), v = momentum*v - g; p += lr*v,
-- so changing lr does not rescale the accumulated velocity.
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise('CorrectedMomentumSGD', { 'lr', 'momentum' }, { lr = 0.01, momentum = 0.9 }, {
  state = { 'v' },
  update = function(param, st, hp)
    return C.ch_corrected_momentum_sgd_update(param._data.ptr, param.grad.ptr, st.v.ptr, hp.lr, hp.momentum)
  end,
})

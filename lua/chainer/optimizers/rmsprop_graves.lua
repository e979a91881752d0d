-- optimizers/rmsprop_graves.lua: Alex Graves's RMSprop (centred second
-- moment, momentum on the step; eps inside the root).  States n, g, delta.
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise.define('RMSpropGraves', { 'lr', 'alpha', 'momentum', 'eps' },
  { lr = 1e-4, alpha = 0.95, momentum = 0.9, eps = 1e-4 }, {
  state = { 'n', 'g', 'delta' },
  update = function(param, st, hp)
    return C.ch_rmsprop_graves_update(param._data.ptr, param.grad.ptr, st.n.ptr, st.g.ptr, st.delta.ptr,
      hp.lr, hp.alpha, hp.momentum, hp.eps)
  end,
})

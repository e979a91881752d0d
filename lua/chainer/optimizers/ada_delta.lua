-- optimizers/ada_delta.lua: Zeiler's AdaDelta (states msg and msdx).
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise.define('AdaDelta', { 'rho', 'eps' }, { rho = 0.95, eps = 1e-6 }, {
  state = { 'msg', 'msdx' },
  update = function(param, st, hp)
    return C.ch_adadelta_update(param._data.ptr, param.grad.ptr, st.msg.ptr, st.msdx.ptr, hp.rho, hp.eps)
  end,
})

-- optimizers/smorms3.lua: Simon Funk's SMORMS3 (states mem, g, g2).
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise.define('SMORMS3', { 'lr', 'eps' }, { lr = 0.001, eps = 1e-16 }, {
  state = { 'mem', 'g', 'g2' },
  ones = { mem = true },
  update = function(param, st, hp)
    return C.ch_smorms3_update(param._data.ptr, param.grad.ptr, st.mem.ptr, st.g.ptr, st.g2.ptr, hp.lr, hp.eps)
  end,
})

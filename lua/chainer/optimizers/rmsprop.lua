-- optimizers/rmsprop.lua: Hinton's RMSprop, ms = alpha*ms + (1-alpha)*g^2;
-- p -= lr*g/(sqrt(ms)+eps) (eps inside the root with eps_inside_sqrt).
local C = require('chainer._lib').C
local elementwise = require 'chainer.optimizers._elementwise'

return elementwise.define('RMSprop', { 'lr', 'alpha', 'eps', 'eps_inside_sqrt' },
  { lr = 0.01, alpha = 0.99, eps = 1e-8, eps_inside_sqrt = false }, {
  state = { 'ms' },
  update = function(param, st, hp)
    -- level 4: the caller of the rule's update, as the kernel's own errors
    if hp.eps == 0 then error('RMSprop: eps must be positive (got 0)', 4) end
    return C.ch_rmsprop_update(param._data.ptr, param.grad.ptr, st.ms.ptr, hp.lr, hp.alpha, hp.eps,
      hp.eps_inside_sqrt and 1 or 0)
  end,
})

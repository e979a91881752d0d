-- optimizers/ams_grad.lua: AMSGrad, Adam with amsgrad = true (state vhat).
local optimizer = require 'chainer.optimizer'
local adam = require 'chainer.optimizers.adam'

local AMSGrad = optimizer.gradient_method('AMSGrad', adam.AdamRule,
  { 'alpha', 'beta1', 'beta2', 'eps', 'eta' }, nil, { amsgrad = true }, adam.Adam)

return { AMSGrad = AMSGrad }

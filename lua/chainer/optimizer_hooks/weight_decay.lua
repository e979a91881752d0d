-- optimizer_hooks/weight_decay.lua: L2 regularisation, g += rate * p
-- (one fused pass per parameter).
local common = require 'chainer.optimizer_hooks._common'
local C, check = common.C, common.check

local WeightDecay = common.Hook:extend('WeightDecay')
local SIGNATURE = common.signature { 'rate' }
WeightDecay.name = 'WeightDecay'
WeightDecay.call_for_each_param = true

-- WeightDecay(rate) / WeightDecay{rate =}
function WeightDecay:init(...)
  local a = common.args('WeightDecay', SIGNATURE, select('#', ...), ...)
  self.rate = common.number(a.rate, 'WeightDecay', 'rate')
end

function WeightDecay:call(rule, param)
  local p, g = param._data, param.grad
  if p == nil or g == nil then return end
  check(C.ch_grad_transform(g.ptr, p.ptr, 1, self.rate, 0, -math.huge, math.huge), 2)
end

return WeightDecay

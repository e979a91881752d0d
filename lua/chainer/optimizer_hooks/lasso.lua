-- optimizer_hooks/lasso.lua: L1 regularisation, g += rate * sign(p).
local common = require 'chainer.optimizer_hooks._common'
local C, check = common.C, common.check

local Lasso = common.Hook:extend('Lasso')
local SIGNATURE = common.signature { 'rate' }
Lasso.name = 'Lasso'
Lasso.call_for_each_param = true

-- Lasso(rate) / Lasso{rate =}
function Lasso:init(...)
  local a = common.args('Lasso', SIGNATURE, select('#', ...), ...)
  self.rate = common.number(a.rate, 'Lasso', 'rate')
end

function Lasso:call(rule, param)
  local p, g = param._data, param.grad
  if p == nil or g == nil then return end
  check(C.ch_grad_transform(g.ptr, p.ptr, 1, self.rate, 1, -math.huge, math.huge), 2)
end

return Lasso

-- optimizer_hooks/gradient_hard_clipping.lua: clips every gradient element
-- into [lower_bound, upper_bound].
local common = require 'chainer.optimizer_hooks._common'
local C, check = common.C, common.check

local GradientHardClipping = common.Hook:extend('GradientHardClipping')
local SIGNATURE = common.signature { 'lower_bound', 'upper_bound' }
GradientHardClipping.name = 'GradientHardClipping'
GradientHardClipping.call_for_each_param = true

-- GradientHardClipping(lower_bound, upper_bound) / {lower_bound =, upper_bound =}
function GradientHardClipping:init(...)
  local a = common.args('GradientHardClipping', SIGNATURE, select('#', ...), ...)
  self.lower_bound = common.number(a.lower_bound, 'GradientHardClipping', 'lower_bound')
  self.upper_bound = common.number(a.upper_bound, 'GradientHardClipping', 'upper_bound')
  if self.lower_bound > self.upper_bound then
    error(string.format('GradientHardClipping: lower_bound (%g) must not exceed upper_bound (%g)',
      self.lower_bound, self.upper_bound), 3)
  end
end

function GradientHardClipping:call(rule, param)
  local g = param.grad
  if g == nil then return end
  check(C.ch_grad_transform(g.ptr, nil, 1, 0, 0, self.lower_bound, self.upper_bound), 2)
end

return GradientHardClipping

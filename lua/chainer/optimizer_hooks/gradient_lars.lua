-- optimizer_hooks/gradient_lars.lua: layer-wise adaptive rate scaling (You
-- et al.).  Per parameter, with local_rate = |p| / (eps + |g| + wd*|p|):
-- g = rate * (g + wd * p), rate = local_rate when |p| > threshold, else 1.
local ffi = require 'ffi'
local common = require 'chainer.optimizer_hooks._common'
local C, check = common.C, common.check

local GradientLARS = common.Hook:extend('GradientLARS')
local SIGNATURE = common.signature { 'threshold', 'weight_decay', 'eps' }
GradientLARS.name = 'GradientLARS'
GradientLARS.call_for_each_param = true

-- GradientLARS(threshold, weight_decay, eps) / {threshold = 1e-2, weight_decay = 0, eps = 1e-9}
function GradientLARS:init(...)
  local a = common.args('GradientLARS', SIGNATURE, select('#', ...), ...)
  self.threshold = common.number(a.threshold or 1e-2, 'GradientLARS', 'threshold')
  self.weight_decay = common.number(a.weight_decay or 0, 'GradientLARS', 'weight_decay')
  self.eps = common.number(a.eps or 1e-9, 'GradientLARS', 'eps')
end

local acc = ffi.new('double[1]')

function GradientLARS:call(rule, param)
  local p, g = param._data, param.grad
  if p == nil or g == nil then return end
  check(C.ch_sqnorm(p.ptr, acc), 2)
  local p_norm = math.sqrt(acc[0])
  check(C.ch_sqnorm(g.ptr, acc), 2)
  local g_norm = math.sqrt(acc[0])
  local wd = self.weight_decay
  local rate = 1
  if p_norm > self.threshold then rate = p_norm / (self.eps + g_norm + wd * p_norm) end
  check(C.ch_grad_transform(g.ptr, p.ptr, rate, wd, 0, -math.huge, math.huge), 2)
end

return GradientLARS

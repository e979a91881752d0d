-- optimizer_hooks/gradient_clipping.lua: rescales every gradient so that the
-- global L2 norm over all parameters is at most `threshold`.
local ffi = require 'ffi'
local common = require 'chainer.optimizer_hooks._common'
local C, check = common.C, common.check

local GradientClipping = common.Hook:extend('GradientClipping')
local SIGNATURE = common.signature { 'threshold' }
GradientClipping.name = 'GradientClipping'

-- GradientClipping(threshold) / GradientClipping{threshold =}
function GradientClipping:init(...)
  local a = common.args('GradientClipping', SIGNATURE, select('#', ...), ...)
  self.threshold = common.number(a.threshold, 'GradientClipping', 'threshold')
end

local acc = ffi.new('double[1]')

-- The global L2 norm of the gradients of `params` (an iterator or a list).
function GradientClipping.grad_norm(iter)
  local total = 0
  for p in iter do
    local g = p.grad
    if g ~= nil then
      check(C.ch_sqnorm(g.ptr, acc), 2)
      total = total + acc[0]
    end
  end
  return math.sqrt(total)
end

function GradientClipping:call(opt)
  local norm = GradientClipping.grad_norm(opt.target:params(false))
  local rate = self.threshold / norm
  if rate >= 1 then return end
  for p in opt.target:params(false) do
    local g = p.grad
    if g ~= nil then
      check(C.ch_grad_transform(g.ptr, nil, rate, 0, 0, -math.huge, math.huge), 2)
    end
  end
end

return GradientClipping

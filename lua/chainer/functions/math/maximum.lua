-- functions/math/maximum.lua: F.maximum(x1, x2) and F.minimum(x1, x2),
-- elementwise with broadcasting.  As in Chainer, ties send the gradient to
-- x1 (x1 >= x2 for maximum, x1 <= x2 for minimum).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local function make(name, cls_name, tfn, cmp)
  local cls = FunctionNode:extend(cls_name)
  function cls:forward(inputs)
    local a, b = inputs[1], inputs[2]
    local y = tfn(a, b)
    local c = cmp(a, b)
    self._m1 = c:astype(y.dtype):broadcast_to(y.shape)
    self._sa, self._sb = a.shape, b.shape
    return { y }
  end
  function cls:backward(idx, gys)
    local F = H.F()
    local gy = gys[1]
    local m1 = self._m1
    local g1, g2
    if H.wants(idx, 1) then g1 = F.sum_to(gy * m1, self._sa) end
    if H.wants(idx, 2) then g2 = F.sum_to(gy * (1 - m1), self._sb) end
    return { g1, g2 }
  end
  local function wrapper(x1, x2)
    local a, b = H.float_pair(name, 'x1', x1, 'x2', x2)
    return setmetatable({}, cls):apply({ x1, x2 })[1]
  end
  return cls, wrapper
end

M.Maximum, M.maximum = make('maximum', 'Maximum', T.maximum, T.ge)
M.Minimum, M.minimum = make('minimum', 'Minimum', T.minimum, T.le)

return M

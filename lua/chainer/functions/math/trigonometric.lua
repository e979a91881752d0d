-- functions/math/trigonometric.lua: F.sin, F.cos, F.tan, F.arcsin, F.arccos,
-- F.arctan (elementwise) and F.arctan2(x1, x2).  Every backward is composed
-- of differentiable functions, so all of them support double backprop.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

M.Sin, M.sin = H.unary { name = 'sin', class = 'Sin', retain = 'x', forward = T.sin,
  grad = function(x, y, gy) return gy * M.cos(x) end }

M.Cos, M.cos = H.unary { name = 'cos', class = 'Cos', retain = 'x', forward = T.cos,
  grad = function(x, y, gy) return -(gy * M.sin(x)) end }

M.Tan, M.tan = H.unary { name = 'tan', class = 'Tan', retain = 'x', forward = T.tan,
  grad = function(x, y, gy)
    local c = M.cos(x)
    return gy / (c * c)
  end }

M.Arcsin, M.arcsin = H.unary { name = 'arcsin', class = 'Arcsin', retain = 'x', forward = T.arcsin,
  grad = function(x, y, gy) return gy / H.F().sqrt(1 - x * x) end }

M.Arccos, M.arccos = H.unary { name = 'arccos', class = 'Arccos', retain = 'x', forward = T.arccos,
  grad = function(x, y, gy) return -(gy / H.F().sqrt(1 - x * x)) end }

M.Arctan, M.arctan = H.unary { name = 'arctan', class = 'Arctan', retain = 'x', forward = T.arctan,
  grad = function(x, y, gy) return gy / (1 + x * x) end }

-- arctan2(x1, x2) = the angle of (x2, x1); d/dx1 = x2 / r2, d/dx2 = -x1 / r2.
local Arctan2 = FunctionNode:extend('Arctan2')
M.Arctan2 = Arctan2
function Arctan2:forward(inputs)
  local a, b = inputs[1], inputs[2]
  self:retain_inputs({ 1, 2 })
  local y = T.arctan2(a, b)
  self._sa, self._sb = a.shape, b.shape
  return { y }
end
function Arctan2:backward(idx, gys)
  local F = H.F()
  local xs = self:get_retained_inputs()
  local x1, x2 = xs[1], xs[2]
  local g = gys[1] / (x1 * x1 + x2 * x2)
  local g1, g2
  if H.wants(idx, 1) then g1 = F.sum_to(g * x2, self._sa) end
  if H.wants(idx, 2) then g2 = F.sum_to(-(g * x1), self._sb) end
  return { g1, g2 }
end

function M.arctan2(x1, x2)
  local a, b = H.float_pair('arctan2', 'x1', x1, 'x2', x2)
  return setmetatable({}, Arctan2):apply({ x1, x2 })[1]
end

return M

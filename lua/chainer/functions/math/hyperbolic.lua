-- functions/math/hyperbolic.lua: F.sinh, F.cosh and F.arctanh (F.tanh is an
-- activation); differentiable to any order.
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'

local M = {}

M.Sinh, M.sinh = H.unary { name = 'sinh', class = 'Sinh', retain = 'x', forward = T.sinh,
  grad = function(x, y, gy) return gy * M.cosh(x) end }

M.Cosh, M.cosh = H.unary { name = 'cosh', class = 'Cosh', retain = 'x', forward = T.cosh,
  grad = function(x, y, gy) return gy * M.sinh(x) end }

M.Arctanh, M.arctanh = H.unary { name = 'arctanh', class = 'Arctanh', retain = 'x', forward = T.arctanh,
  grad = function(x, y, gy) return gy / (1 - x * x) end }

return M

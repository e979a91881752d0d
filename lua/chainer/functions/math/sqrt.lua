-- functions/math/sqrt.lua: F.sqrt, F.rsqrt (1 / sqrt(x)) and F.square;
-- differentiable to any order.
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'

local M = {}

-- d sqrt(x) = 1 / (2 y)
M.Sqrt, M.sqrt = H.unary { name = 'sqrt', class = 'Sqrt', retain = 'y', forward = T.sqrt,
  grad = function(x, y, gy) return gy / (y * 2) end }

-- d x^(-1/2) = -y^3 / 2
M.Rsqrt, M.rsqrt = H.unary { name = 'rsqrt', class = 'Rsqrt', retain = 'y', forward = T.rsqrt,
  grad = function(x, y, gy) return gy * (y * y * y) * -0.5 end }

M.Square, M.square = H.unary { name = 'square', class = 'Square', retain = 'x', forward = T.square,
  grad = function(x, y, gy) return gy * (x * 2) end }

return M

-- functions/math/exponential.lua: F.log2, F.log10, F.log1p and F.expm1
-- (F.exp and F.log live in exp.lua and log.lua); differentiable to any order.
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'

local M = {}

local inv_ln2, inv_ln10 = 1 / math.log(2), 1 / math.log(10)

M.Log2, M.log2 = H.unary { name = 'log2', class = 'Log2', retain = 'x', forward = T.log2,
  grad = function(x, y, gy) return gy * inv_ln2 / x end }

M.Log10, M.log10 = H.unary { name = 'log10', class = 'Log10', retain = 'x', forward = T.log10,
  grad = function(x, y, gy) return gy * inv_ln10 / x end }

M.Log1p, M.log1p = H.unary { name = 'log1p', class = 'Log1p', retain = 'x', forward = T.log1p,
  grad = function(x, y, gy) return gy / (x + 1) end }

-- d expm1(x) = exp(x) = y + 1
M.Expm1, M.expm1 = H.unary { name = 'expm1', class = 'Expm1', retain = 'y', forward = T.expm1,
  grad = function(x, y, gy) return gy * (y + 1) end }

return M

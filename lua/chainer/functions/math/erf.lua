-- functions/math/erf.lua: F.erf, F.erfc, F.erfinv and F.ndtr (the standard
-- normal CDF); differentiable to any order.
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'

local M = {}

local two_over_sqrt_pi = 2 / math.sqrt(math.pi)
local half_sqrt_pi = math.sqrt(math.pi) / 2
local inv_sqrt_2pi = 1 / math.sqrt(2 * math.pi)

local function exp(v) return H.F().exp(v) end

M.Erf, M.erf = H.unary { name = 'erf', class = 'Erf', retain = 'x', forward = T.erf,
  grad = function(x, y, gy) return gy * exp(-(x * x)) * two_over_sqrt_pi end }

M.Erfc, M.erfc = H.unary { name = 'erfc', class = 'Erfc', retain = 'x', forward = T.erfc,
  grad = function(x, y, gy) return gy * exp(-(x * x)) * -two_over_sqrt_pi end }

-- d erfinv(x) = sqrt(pi)/2 * exp(erfinv(x)^2)
M.ErfInv, M.erfinv = H.unary { name = 'erfinv', class = 'ErfInv', retain = 'y', forward = T.erfinv,
  grad = function(x, y, gy) return gy * exp(y * y) * half_sqrt_pi end }

M.Ndtr, M.ndtr = H.unary { name = 'ndtr', class = 'Ndtr', retain = 'x', forward = T.ndtr,
  grad = function(x, y, gy) return gy * exp(x * x * -0.5) * inv_sqrt_2pi end }

return M

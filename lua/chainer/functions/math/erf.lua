-- functions/math/erf.lua: the error function family: F.erf, F.erfc,
-- F.erfinv, F.erfcinv, F.erfcx (exp(x^2) erfc(x)), F.ndtr (the standard
-- normal CDF), F.ndtri (its inverse) and F.log_ndtr; differentiable to any
-- order.
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'

local M = {}

local two_over_sqrt_pi = 2 / math.sqrt(math.pi)
local half_sqrt_pi = math.sqrt(math.pi) / 2
local inv_sqrt_2pi = 1 / math.sqrt(2 * math.pi)
local sqrt_2pi = math.sqrt(2 * math.pi)
local sqrt_2_over_pi = math.sqrt(2 / math.pi)

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

-- d erfcinv(x) = -sqrt(pi)/2 * exp(erfcinv(x)^2)
M.ErfcInv, M.erfcinv = H.unary { name = 'erfcinv', class = 'ErfcInv', retain = 'y', forward = T.erfcinv,
  grad = function(x, y, gy) return gy * exp(y * y) * -half_sqrt_pi end }

-- d erfcx(x) = 2 x erfcx(x) - 2/sqrt(pi)
M.Erfcx, M.erfcx = H.unary { name = 'erfcx', class = 'Erfcx', retain = 'xy', forward = T.erfcx,
  grad = function(x, y, gy) return gy * (x * y * 2 - two_over_sqrt_pi) end }

-- d ndtri(p) = sqrt(2 pi) * exp(ndtri(p)^2 / 2)
M.Ndtri, M.ndtri = H.unary { name = 'ndtri', class = 'Ndtri', retain = 'y', forward = T.ndtri,
  grad = function(x, y, gy) return gy * exp(y * y * 0.5) * sqrt_2pi end }

-- d log_ndtr(x) = pdf(x) / cdf(x) = sqrt(2/pi) / erfcx(-x/sqrt(2)): the
-- erfcx form neither underflows nor divides 0 by 0 in the lower tail.
M.LogNdtr, M.log_ndtr = H.unary { name = 'log_ndtr', class = 'LogNdtr', retain = 'x', forward = T.log_ndtr,
  grad = function(x, y, gy) return gy * sqrt_2_over_pi / M.erfcx(x * -math.sqrt(0.5)) end }

return M

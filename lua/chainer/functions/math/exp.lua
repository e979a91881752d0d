-- functions/math/exp.lua: F.exp(x) = e^x; d/dx = e^x (the retained output).
-- As in Chainer, float inputs only (an int tensor would silently become float).
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'

local M = {}

M.Exp, M.exp = H.unary { name = 'exp', class = 'Exp', retain = 'y', forward = T.exp,
  grad = function(x, y, gy) return gy * y end }

return M

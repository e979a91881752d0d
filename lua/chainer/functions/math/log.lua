-- functions/math/log.lua: F.log(x), the natural logarithm; d/dx = 1/x.
-- As in Chainer, float inputs only (an int tensor would silently become float).
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'

local M = {}

M.Log, M.log = H.unary { name = 'log', class = 'Log', retain = 'x', forward = T.log,
  grad = function(x, y, gy) return gy / x end }

return M

-- functions/math/rounding.lua: F.floor, F.ceil, F.fix (round toward zero)
-- and F.sign.  As in Chainer they have no gradient: the result is a new
-- Variable that is not connected to the graph.
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'

local M = {}

M.floor = H.forward_only('floor', T.floor)
M.ceil = H.forward_only('ceil', T.ceil)
M.fix = H.forward_only('fix', T.trunc)
M.sign = H.forward_only('sign', T.sign)

return M

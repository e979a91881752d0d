-- functions/activation/leaky_relu.lua: F.leaky_relu(x, {slope = 0.2}):
-- x where x >= 0, slope * x elsewhere.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local K = require 'chainer.functions.activation._kernels'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'slope' }

M.LeakyReLU = K.piecewise('LeakyReLU', function(x, node)
  local c = T.ge(x, 0):astype(x.dtype) * (1 - node.slope) + node.slope
  return x * c, c
end)

function M.leaky_relu(x, opts)
  args.float_array('leaky_relu', 'x', x)
  local slope = H.number_or_option('leaky_relu', opts, OPTIONS, 'slope', 0.2)
  if type(slope) ~= 'number' then error('leaky_relu: slope must be a number (got ' .. type(slope) .. ')', 2) end
  local f = setmetatable({}, M.LeakyReLU)
  f.slope = slope
  return f:apply({ x })[1]
end

return M

-- functions/activation/clipped_relu.lua: F.clipped_relu(x, {z = 20}) =
-- min(max(0, x), z) and F.relu6(x) = clipped_relu(x, 6).  As in Chainer
-- the gradient passes where 0 < x < z.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local K = require 'chainer.functions.activation._kernels'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'z' }

M.ClippedReLU = K.piecewise('ClippedReLU', function(x, node)
  local z = node.z
  local c = T.logical_and(T.gt(x, 0), T.lt(x, z)):astype(x.dtype)
  return T.clip(x, 0, z), c
end)

local function clipped(x, z)
  local f = setmetatable({}, M.ClippedReLU)
  f.z = z
  return f:apply({ x })[1]
end

function M.clipped_relu(x, opts)
  args.float_array('clipped_relu', 'x', x)
  local z = H.number_or_option('clipped_relu', opts, OPTIONS, 'z', 20.0)
  if type(z) ~= 'number' or z <= 0 then
    error('clipped_relu: z must be a positive number (got ' .. tostring(z) .. ')', 2)
  end
  return clipped(x, z)
end

function M.relu6(x)
  args.float_array('relu6', 'x', x)
  return clipped(x, 6.0)
end

return M

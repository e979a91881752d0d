-- functions/noise/_util.lua: shared pieces of the noise family (not
-- exported into F).
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local K = require 'chainer.functions._checks'

local U = {}

U.float_data, U.opts, U.same_shape = K.float_data, K.opts, K.same_shape

-- A tensor argument shaped `shape` (cast to dtype), or an error.
function U.shaped(fn, name, v, shape, dtype, level)
  local d = Variable.as_array(v)
  if not T.is_tensor(d) then
    error(string.format('%s: %s must be a tensor (got %s)', fn, name, type(v)), (level or 2) + 1)
  end
  if not U.same_shape(d.shape, shape) then
    error(string.format('%s: %s has shape %s, expected %s', fn, name, T.shape_str(d.shape), T.shape_str(shape)),
      (level or 2) + 1)
  end
  if d.dtype ~= dtype then d = d:astype(dtype) end
  return d
end

-- y = x * c for a constant tensor c (broadcast to x): linear, so its
-- gradient gy * c is again a MulConstant and any order works.
local MulConstant = FunctionNode:extend('MulConstant')
U.MulConstant = MulConstant
function MulConstant:forward(inputs) return { inputs[1] * self.c } end
function MulConstant:backward(idx, gys) return { U.mul_const(gys[1], self.c, getmetatable(self)) } end

function U.mul_const(x, c, cls)
  local f = setmetatable({}, cls or MulConstant)
  f.c = c
  return f:apply({ x })[1]
end

return U

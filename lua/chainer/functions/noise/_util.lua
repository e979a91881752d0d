-- functions/noise/_util.lua: shared pieces of the noise family (not
-- exported into F).
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local args = require 'chainer._args'
local shape_equal = require('chainer.functions.math.sum_to').shape_equal

local U = {}

-- A tensor argument shaped `shape` (cast to dtype), or an error.
function U.shaped(fn, name, v, shape, dtype, level)
  local d = args.array(fn, name, v, (level or 2) + 1)
  if not shape_equal(d, shape) then
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

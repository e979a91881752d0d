-- functions/noise/_util.lua: shared pieces of the noise family (not
-- exported into F).
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'

local U = {}

local floats = { float16 = true, float32 = true, float64 = true }

function U.float_data(fn, name, v, level)
  local d = Variable.as_array(v)
  if not T.is_tensor(d) then
    error(string.format('%s: %s must be a Variable or a tensor (got %s)', fn, name, type(v)), (level or 2) + 1)
  end
  if not floats[d.dtype] then
    error(string.format('%s: %s must be a float tensor (float16, float32 or float64; got %s)', fn, name, d.dtype),
      (level or 2) + 1)
  end
  return d
end

function U.opts(fn, o, allowed, level)
  if o == nil then return {} end
  if type(o) ~= 'table' or getmetatable(o) ~= nil then
    error(string.format('%s: options must be a table (got %s)', fn, type(o)), (level or 2) + 1)
  end
  for k in pairs(o) do
    if not allowed[k] then error(string.format("%s: unknown option '%s'", fn, tostring(k)), (level or 2) + 1) end
  end
  return o
end

function U.same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

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

-- functions/array/reshape.lua: F.reshape(x, shape); one entry may be -1.
-- The output is a view of x when x is contiguous.
local args = require 'chainer._args'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'shape' }

local Reshape = FunctionNode:extend('Reshape')
M.Reshape = Reshape

function Reshape:forward(inputs)
  local x = inputs[1]
  self._in_shape = x.shape
  return { x:reshape(self._shape) }
end

function Reshape:backward(idx, gys)
  return { M.reshape(gys[1], self._in_shape) }
end

-- F.reshape(x, shape) or F.reshape(x, d1, d2, ...): x itself (as a
-- Variable) when the shape does not change.
function M.reshape(x, shape, ...)
  local d = args.array('reshape', 'x', x)
  if type(shape) == 'number' then shape = { shape, ... } end
  -- Chainer's keyword form F.reshape(x, shape=(2, 6)) arrives as {shape = {2, 6}}
  shape = H.keyword_form('reshape', shape, OPTIONS, 'shape')
  if type(shape) ~= 'table' then error('reshape: shape must be a table of integers', 2) end
  if require('chainer.functions.math.sum_to').shape_equal(d, shape) then return Variable.as_variable(x) end
  local f = setmetatable({}, Reshape)
  f._shape = shape
  return f:apply({ x })[1]
end

return M

-- functions/math/sum_to.lua: F.sum_to(x, shape), summing x down to `shape`
-- (the inverse of broadcasting; the backward pass of every broadcast).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'shape' }

local SumTo = FunctionNode:extend('SumTo')
M.SumTo = SumTo

function SumTo:forward(inputs)
  local x = inputs[1]
  self._in_shape = x.shape
  return { T.sum_to(x, self._shape) }
end

function SumTo:backward(idx, gys)
  local broadcast_to = require('chainer.functions.array.broadcast_to').broadcast_to
  return { broadcast_to(gys[1], self._in_shape) }
end

local function shape_equal(x, shape)
  local p = x.ptr
  if p.nd ~= #shape then return false end
  for i = 1, #shape do
    if p.dim[i - 1] ~= shape[i] then return false end
  end
  return true
end
M.shape_equal = shape_equal

-- F.sum_to(x, shape): x itself (as a Variable) when it already has `shape`.
function M.sum_to(x, shape)
  local d = args.array('sum_to', 'x', x)
  -- Chainer's keyword form F.sum_to(x, shape=(3, 1)) arrives as {shape = {3, 1}}
  shape = H.keyword_form('sum_to', shape, OPTIONS, 'shape')
  if type(shape) == 'number' then shape = { shape } end
  if type(shape) ~= 'table' then error('sum_to: shape must be a table of integers', 2) end
  if shape_equal(d, shape) then return Variable.as_variable(x) end
  local f = setmetatable({}, SumTo)
  f._shape = shape
  return f:apply({ x })[1]
end

return M

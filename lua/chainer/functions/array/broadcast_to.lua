-- functions/array/broadcast_to.lua: F.broadcast_to(x, shape); the output is
-- a broadcast view of x (no copy), its gradient is summed back with sum_to.
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local args = require 'chainer._args'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'shape' }

local BroadcastTo = FunctionNode:extend('BroadcastTo')
M.BroadcastTo = BroadcastTo

function BroadcastTo:forward(inputs)
  local x = inputs[1]
  self._in_shape = x.shape
  return { x:broadcast_to(self._shape) }
end

function BroadcastTo:backward(idx, gys)
  local sum_to = require('chainer.functions.math.sum_to').sum_to
  return { sum_to(gys[1], self._in_shape) }
end

-- F.broadcast_to(x, shape): x itself (as a Variable) when it already has `shape`.
function M.broadcast_to(x, shape)
  local d = args.array('broadcast_to', 'x', x)
  -- Chainer's keyword form F.broadcast_to(x, shape=(3, 4)) arrives as {shape = {3, 4}}
  shape = H.keyword_form('broadcast_to', shape, OPTIONS, 'shape')
  if type(shape) == 'number' then shape = { shape } end
  if type(shape) ~= 'table' then error('broadcast_to: shape must be a table of integers', 2) end
  if require('chainer.functions.math.sum_to').shape_equal(d, shape) then return Variable.as_variable(x) end
  local f = setmetatable({}, BroadcastTo)
  f._shape = shape
  return f:apply({ x })[1]
end

return M

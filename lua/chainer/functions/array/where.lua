-- functions/array/where.lua: F.where(condition, x, y): x where condition
-- is true, else y (condition a bool tensor or Variable; the three
-- broadcast together).  Gradients: gy masked by condition for x, by its
-- complement for y (where again, so differentiable to any order).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'

local M = {}

local Where = FunctionNode:extend('Where')
M.Where = Where

function Where:forward(inputs)
  return { T.where(self.cond, inputs[1], inputs[2]) }
end

function Where:backward(idx, gys)
  local gy = gys[1]
  local zero = Variable.new_var(T.zeros(gy.shape, gy.dtype, gy.array.ptr.dev), false)
  local gx, gz
  for k = 1, #idx do
    if idx[k] == 1 then gx = M.where(self.cond, gy, zero) end
    if idx[k] == 2 then gz = M.where(self.cond, zero, gy) end
  end
  return { gx, gz }
end

-- F.where(condition, x, y)
function M.where(condition, x, y)
  local c = args.array('where', 'condition', condition)
  if c.dtype ~= 'bool' then error('where: condition must be a bool array (got ' .. c.dtype .. ')', 2) end
  local dx = args.array('where', 'x', x)
  local dy = args.array('where', 'y', y)
  if dx.dtype ~= dy.dtype then
    error(string.format('where: x is %s but y is %s (they must share a dtype)', dx.dtype, dy.dtype), 2)
  end
  local bx, by = x, y
  local cs, xs, ys = c.shape, dx.shape, dy.shape
  local same = #cs == #xs and #cs == #ys
  if same then
    for i = 1, #cs do if cs[i] ~= xs[i] or cs[i] ~= ys[i] then same = false break end end
  end
  if not same then
    local broadcast = require('chainer.functions.array.broadcast').broadcast
    local bc
    bc, bx, by = broadcast(Variable.new_var(c, false), x, y)
    c = bc.array
  end
  local f = setmetatable({}, Where)
  f.cond = c
  return f:apply({ bx, by })[1]
end

return M

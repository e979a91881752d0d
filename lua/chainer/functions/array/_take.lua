-- functions/array/_take.lua: the gather/scatter pair behind repeat,
-- permutate, tile and advanced get_item.
--
-- Take(x; idx, axis) = numpy.take(x, idx, axis) (axis nil: from the
-- flattened x).  Its gradient TakeGrad scatters gy back into zeros of x's
-- shape, accumulating repeated positions; TakeGrad's own gradient is Take
-- again, so both are differentiable to any order.  idx is a constant int
-- tensor (already checked and non-negative).
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'

local M = {}

local Take = FunctionNode:extend('Take')
local TakeGrad = FunctionNode:extend('TakeGrad')
M.Take, M.TakeGrad = Take, TakeGrad

local function take(x, idx, axis, label)
  local f = setmetatable({}, Take)
  f.idx, f.axis, f._label = idx, axis, label
  return f:apply({ x })[1]
end
M._take = take

function Take:label() return self._label or 'Take' end

function Take:forward(inputs)
  local x = inputs[1]
  self._in_shape = x.shape
  return { T.take(x, self.idx, self.axis) }
end

function Take:backward(_, gys)
  local g = setmetatable({}, TakeGrad)
  g.idx, g.axis, g.shape = self.idx, self.axis, self._in_shape
  return { g:apply({ gys[1] })[1] }
end

function TakeGrad:forward(inputs)
  local gy = inputs[1]
  local shape = self.shape
  local gx
  if self.axis == nil then
    local n = 1
    for i = 1, #shape do n = n * shape[i] end
    gx = T.zeros({ n }, gy.dtype, gy.ptr.dev)
    gx:scatter_add_(0, self.idx:reshape(-1), gy:reshape(-1))
    gx = gx:reshape(shape)
  else
    gx = T.zeros(shape, gy.dtype, gy.ptr.dev)
    gx:scatter_add_(self.axis, self.idx, gy)
  end
  return { gx }
end

function TakeGrad:backward(_, ggs)
  return { take(ggs[1], self.idx, self.axis) }
end

return M

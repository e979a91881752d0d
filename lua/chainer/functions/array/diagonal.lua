-- functions/array/diagonal.lua: F.diagonal(x, offset = 0, axis1 = 0,
-- axis2 = 1) (numpy.diagonal; the output is a view).  The gradient writes
-- gy onto the diagonal of zeros (DiagonalGrad), whose gradient is the
-- diagonal again.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local U = require 'chainer.functions.array._util'

local M = {}

local SIGNATURE = args.signature { 'offset', 'axis1', 'axis2' }

local Diagonal = FunctionNode:extend('Diagonal')
local DiagonalGrad = FunctionNode:extend('DiagonalGrad')
M.Diagonal, M.DiagonalGrad = Diagonal, DiagonalGrad

function Diagonal:forward(inputs)
  local x = inputs[1]
  self._in_shape = x.shape
  return { x:diagonal(self.offset, self.axis1, self.axis2) }
end

function Diagonal:backward(_, gys)
  local g = setmetatable({}, DiagonalGrad)
  g.offset, g.axis1, g.axis2, g.shape = self.offset, self.axis1, self.axis2, self._in_shape
  return { g:apply({ gys[1] })[1] }
end

function DiagonalGrad:forward(inputs)
  local gy = inputs[1]
  local gx = T.zeros(self.shape, gy.dtype, gy.ptr.dev)
  gx:diagonal(self.offset, self.axis1, self.axis2):copy_(gy)
  return { gx }
end

function DiagonalGrad:backward(_, ggs)
  local f = setmetatable({}, Diagonal)
  f.offset, f.axis1, f.axis2 = self.offset, self.axis1, self.axis2
  return { f:apply({ ggs[1] })[1] }
end

-- F.diagonal(x, offset = 0, axis1 = 0, axis2 = 1)
function M.diagonal(x, offset, axis1, axis2)
  local v = args.parse('diagonal', SIGNATURE, 3, offset, axis1, axis2)
  local d = args.array('diagonal', 'x', x)
  local nd = d.ptr.nd
  if nd < 2 then error(string.format('diagonal: x must be at least 2-d (got %d-d)', nd), 2) end
  local f = setmetatable({}, Diagonal)
  f.offset = U.int('diagonal', v.offset, 'offset', 0)
  f.axis1 = U.axis('diagonal', U.int('diagonal', v.axis1, 'axis1', 0), nd, 'axis1')
  f.axis2 = U.axis('diagonal', U.int('diagonal', v.axis2, 'axis2', 1), nd, 'axis2')
  if f.axis1 == f.axis2 then error('diagonal: axis1 and axis2 must be different axes', 2) end
  return f:apply({ x })[1]
end

return M

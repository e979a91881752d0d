-- functions/array/flip.lua: F.flip(x, axis), F.fliplr(x), F.flipud(x).
-- The output is a reversed view; the gradient flips gy back.
local args = require 'chainer._args'
local FunctionNode = require 'chainer.function_node'
local U = require 'chainer.functions.array._util'

local M = {}

local SIGNATURE = args.signature { 'axis' }

local Flip = FunctionNode:extend('Flip')
M.Flip = Flip

function Flip:forward(inputs) return { inputs[1]:flip(self.axis) } end

function Flip:backward(_, gys)
  local f = setmetatable({}, Flip)
  f.axis = self.axis
  return { f:apply({ gys[1] })[1] }
end

local function flip(fn, x, axis)
  local f = setmetatable({}, Flip)
  f.axis = axis
  return f:apply({ x })[1]
end

-- F.flip(x, axis): reverses the order of the elements along axis.
function M.flip(x, axis)
  local v = args.parse('flip', SIGNATURE, 1, axis)
  local d = args.array('flip', 'x', x)
  if v.axis == nil then error('flip: axis is required', 2) end
  if d.ptr.nd == 0 then error('flip: cannot flip a 0-d array', 2) end
  return flip('flip', x, U.axis('flip', v.axis, d.ptr.nd))
end

-- F.fliplr(x): flip along axis 1 (x must be at least 2-d).
function M.fliplr(x)
  local d = args.array('fliplr', 'x', x)
  if d.ptr.nd < 2 then error(string.format('fliplr: x must be at least 2-d (got %d-d)', d.ptr.nd), 2) end
  return flip('fliplr', x, 1)
end

-- F.flipud(x): flip along axis 0 (x must be at least 1-d).
function M.flipud(x)
  local d = args.array('flipud', 'x', x)
  if d.ptr.nd < 1 then error('flipud: x must be at least 1-d (got 0-d)', 2) end
  return flip('flipud', x, 0)
end

return M

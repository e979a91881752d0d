-- functions/array/transpose.lua: F.transpose(x, axes); no axes reverses
-- them.  The output is a view; the gradient is transposed back.
local args = require 'chainer._args'
local FunctionNode = require 'chainer.function_node'

local M = {}

local OPTIONS = args.accept { 'axes' }

local Transpose = FunctionNode:extend('Transpose')
M.Transpose = Transpose

function Transpose:forward(inputs)
  local x = inputs[1]
  local nd = x.ptr.nd
  local axes = self.axes
  if axes == nil then
    axes = {}
    for i = 1, nd do axes[i] = nd - i end
    self.axes = axes
  end
  return { x:transpose(axes) }
end

function Transpose:backward(idx, gys)
  local axes = self.axes
  local inv = {}
  for i = 1, #axes do
    local a = axes[i]
    if a < 0 then a = a + #axes end
    inv[a + 1] = i - 1
  end
  return { M.transpose(gys[1], inv) }
end

-- F.transpose(x), F.transpose(x, {1, 0, 2}) or F.transpose(x, 1, 0, 2)
function M.transpose(x, axes, ...)
  local d = args.array('transpose', 'x', x)
  if type(axes) == 'number' then axes = { axes, ... } end
  -- Chainer's keyword form F.transpose(x, axes=(1, 0, 2)) arrives as {axes = {1, 0, 2}}
  if args.is_options(axes) and next(axes) ~= nil then
    axes = args.options('transpose', axes, OPTIONS).axes or nil -- axes = false is Python's None
  end
  if axes ~= nil and type(axes) ~= 'table' then error('transpose: axes must be a table of integers', 2) end
  if axes ~= nil and #axes ~= d.ptr.nd then
    error(string.format('transpose: axes has %d entries for a %d-d input', #axes, d.ptr.nd), 2)
  end
  local f = setmetatable({}, Transpose)
  f.axes = axes
  return f:apply({ x })[1]
end

return M

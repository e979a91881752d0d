-- functions/array/split_axis.lua: F.split_axis(x, indices_or_sections,
-- axis) and F.separate(x, axis = 0); both return a Lua array of Variables.
--
-- The pieces are views of x.  The gradient concatenates the pieces'
-- gradients (zeros where a piece got none); concat's gradient is a split
-- again, so double backprop works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local U = require 'chainer.functions.array._util'

local M = {}

local SPLIT_AXIS_SIGNATURE = args.signature { 'indices_or_sections', 'axis', 'force_tuple' }
local SEPARATE_SIGNATURE = args.signature { 'axis' }

local SplitAxis = FunctionNode:extend('SplitAxis')
M.SplitAxis = SplitAxis

function SplitAxis:forward(inputs)
  local x = inputs[1]
  self._dt, self._dev = x.dtype, x.ptr.dev
  local ys = T.split(x, self.ios, self.axis)
  local shapes = {}
  for i = 1, #ys do shapes[i] = ys[i].shape end
  self.shapes = shapes
  return ys
end

function SplitAxis:backward(_, gys)
  local concat = require('chainer.functions.array.concat').concat
  local parts = {}
  for i = 1, #self.shapes do
    local g = gys[i]
    if g == nil then g = Variable.new_var(T.zeros(self.shapes[i], self._dt, self._dev), false) end
    parts[i] = g
  end
  return { concat(parts, self.axis) }
end

-- F.split_axis(x, indices_or_sections, axis, {force_tuple = true}):
-- a number n gives n equal pieces (the axis must divide), a table gives the
-- 0-based split positions ({1, 3} gives x[:1], x[1:3], x[3:]).
function M.split_axis(x, indices_or_sections, axis, opts)
  local v = args.parse('split_axis', SPLIT_AXIS_SIGNATURE, 3, indices_or_sections, axis, opts)
  local d = args.array('split_axis', 'x', x)
  local ios = v.indices_or_sections
  axis = v.axis
  if ios == nil then error('split_axis: indices_or_sections is required', 2) end
  if axis == nil then error('split_axis: axis is required', 2) end
  local nd = d.ptr.nd
  if nd == 0 then error('split_axis: cannot split a 0-d array', 2) end
  axis = U.axis('split_axis', axis, nd)
  local n = d.shape[axis + 1]
  if type(ios) == 'number' then
    if ios ~= math.floor(ios) or ios < 1 then
      error('split_axis: the number of sections must be a positive integer (got ' .. tostring(ios) .. ')', 2)
    end
    if n % ios ~= 0 then
      error(string.format('split_axis: axis %d of size %d cannot be split into %d equal sections', axis, n, ios), 2)
    end
  elseif type(ios) == 'table' then
    for i = 1, #ios do
      if type(ios[i]) ~= 'number' or ios[i] ~= math.floor(ios[i]) then
        error('split_axis: indices_or_sections must hold integers', 2)
      end
    end
  else
    error('split_axis: indices_or_sections must be an integer or a table of integers', 2)
  end
  local f = setmetatable({}, SplitAxis)
  f.ios, f.axis = ios, axis
  return f:apply({ x })
end

-- F.separate(x, axis = 0): the slices of x along axis, each without it.
function M.separate(x, axis)
  local v = args.parse('separate', SEPARATE_SIGNATURE, 1, axis)
  local d = args.array('separate', 'x', x)
  axis = v.axis
  if axis == nil or axis == false then axis = 0 end
  local nd = d.ptr.nd
  if nd == 0 then error('separate: cannot separate a 0-d array', 2) end
  axis = U.axis('separate', axis, nd)
  local n = d.shape[axis + 1]
  local reshape = require('chainer.functions.array.reshape').reshape
  local shape = d.shape
  table.remove(shape, axis + 1)
  if n == 0 then return {} end
  local ys = M.split_axis(x, n, axis)
  for i = 1, #ys do ys[i] = reshape(ys[i], shape) end
  return ys
end

return M

-- functions/array/concat.lua: F.concat(xs, axis = 1) and the stacking
-- functions F.stack, F.hstack, F.vstack, F.dstack.
--
-- Concat's gradient splits gy at the input boundaries (split_axis), whose
-- gradient is a concat again.  stack/hstack/vstack/dstack reshape their
-- inputs (expand_dims, at-least-n-d) and concatenate, as NumPy defines them.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local U = require 'chainer.functions.array._util'
local reshape = require('chainer.functions.array.reshape').reshape

local M = {}

local CONCAT_SIGNATURE = args.signature { 'axis' }
local STACK_SIGNATURE = args.signature { 'axis' }

local Concat = FunctionNode:extend('Concat')
M.Concat = Concat

function Concat:forward(inputs)
  local axis = self.axis
  local sizes = {}
  for i = 1, #inputs do sizes[i] = inputs[i].shape[axis + 1] end
  self.sizes = sizes
  return { T.concatenate(inputs, axis) }
end

function Concat:backward(_, gys)
  local split_axis = require('chainer.functions.array.split_axis').split_axis
  local sizes = self.sizes
  if #sizes == 1 then return { gys[1] } end
  local idx, acc = {}, 0
  for i = 1, #sizes - 1 do acc = acc + sizes[i]; idx[i] = acc end
  return split_axis(gys[1], idx, self.axis)
end

-- Checks the list and returns the normalised axis.
local function check_list(fn, xs, axis, new_axis)
  U.list(fn, xs)
  local first = args.array(fn, 'xs[1]', xs[1])
  local nd, dt = first.ptr.nd, first.dtype
  for i = 2, #xs do
    local d = args.array(fn, 'x', xs[i])
    if d.dtype ~= dt then
      error(string.format('%s: xs[%d] is %s but xs[1] is %s (all inputs must share a dtype)', fn, i, d.dtype, dt), 3)
    end
    if d.ptr.nd ~= nd then
      error(string.format('%s: xs[%d] is %d-d but xs[1] is %d-d', fn, i, d.ptr.nd, nd), 3)
    end
  end
  if nd == 0 and not new_axis then error(fn .. ': cannot concatenate 0-d arrays', 3) end
  return U.axis(fn, axis, new_axis and nd + 1 or nd)
end

-- F.concat(xs, axis = 1)
function M.concat(xs, axis)
  local v = args.parse('concat', CONCAT_SIGNATURE, 1, axis)
  axis = v.axis
  if axis == nil or axis == false then axis = 1 end
  axis = check_list('concat', xs, axis)
  if #xs == 1 then return require('chainer.variable').as_variable(xs[1]) end
  local f = setmetatable({}, Concat)
  f.axis = axis
  return f:apply(xs)[1]
end

local function concat_raw(xs, axis)
  if #xs == 1 then return require('chainer.variable').as_variable(xs[1]) end
  local f = setmetatable({}, Concat)
  f.axis = axis
  return f:apply(xs)[1]
end

local function with_ones(shape, where)
  -- where: 'front' puts a 1 first, 'back' last, or an index to insert at (0-based)
  local r = U.copy_shape(shape)
  table.insert(r, where + 1, 1)
  return r
end

-- F.stack(xs, axis = 0): joins equal-shaped arrays along a new axis.
function M.stack(xs, axis)
  local v = args.parse('stack', STACK_SIGNATURE, 1, axis)
  axis = v.axis
  if axis == nil or axis == false then axis = 0 end
  axis = check_list('stack', xs, axis, true)
  local s1 = args.array('stack', 'x', xs[1]).shape
  local ys = {}
  for i = 1, #xs do
    local s = args.array('stack', 'x', xs[i]).shape
    for k = 1, #s1 do
      if s[k] ~= s1[k] then
        error(string.format('stack: xs[%d] has shape %s but xs[1] has shape %s (they must be equal)', i,
          T.shape_str(s), T.shape_str(s1)), 2)
      end
    end
    ys[i] = reshape(xs[i], with_ones(s, axis))
  end
  return concat_raw(ys, axis)
end

-- numpy.hstack: axis 1, or axis 0 for 1-D inputs (0-d ones become 1-D)
function M.hstack(xs)
  U.list('hstack', xs)
  local ys, nd = {}, nil
  for i = 1, #xs do
    local d = args.array('hstack', 'x', xs[i])
    ys[i] = d.ptr.nd == 0 and reshape(xs[i], { 1 }) or xs[i]
    nd = nd or math.max(d.ptr.nd, 1)
  end
  return M.concat(ys, nd == 1 and 0 or 1)
end

-- Each input reshaped by promote(shape) (nil: kept as it is), then
-- concatenated along axis: vstack and dstack.
local function promote_and_concat(fn, xs, promote, axis)
  U.list(fn, xs, nil, 3)
  local ys = {}
  for i = 1, #xs do
    local shape = promote(args.array(fn, 'x', xs[i], 3).shape)
    ys[i] = shape and reshape(xs[i], shape) or xs[i]
  end
  return M.concat(ys, axis)
end

-- numpy.vstack: axis 0 after making every input at least 2-D ((n) -> (1, n))
local function at_least_2d(s)
  if #s == 0 then return { 1, 1 } end
  if #s == 1 then return { 1, s[1] } end
end
function M.vstack(xs)
  local y = promote_and_concat('vstack', xs, at_least_2d, 0)
  return y
end

-- numpy.dstack: axis 2 after making every input at least 3-D
-- ((n) -> (1, n, 1), (m, n) -> (m, n, 1))
local function at_least_3d(s)
  if #s == 0 then return { 1, 1, 1 } end
  if #s == 1 then return { 1, s[1], 1 } end
  if #s == 2 then return { s[1], s[2], 1 } end
end
function M.dstack(xs)
  local y = promote_and_concat('dstack', xs, at_least_3d, 2)
  return y
end

return M

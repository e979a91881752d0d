-- functions/array/axes.lua: F.expand_dims, F.squeeze, F.flatten,
-- F.swapaxes, F.moveaxis, F.rollaxis.  Each is a reshape or a transpose
-- (views), so backward and double backward come from those nodes.
local args = require 'chainer._args'
local U = require 'chainer.functions.array._util'
local reshape = require('chainer.functions.array.reshape').reshape
local transpose = require('chainer.functions.array.transpose').transpose
local Variable = require 'chainer.variable'

local M = {}

local EXPAND_DIMS_SIGNATURE = args.signature { 'axis' }
local SQUEEZE_SIGNATURE = args.signature { 'axis' }
local SWAPAXES_SIGNATURE = args.signature { 'axis1', 'axis2' }
local MOVEAXIS_SIGNATURE = args.signature { 'source', 'destination' }
local ROLLAXIS_SIGNATURE = args.signature { 'axis', 'start' }

-- F.expand_dims(x, axis): a size-1 axis inserted at position axis
-- (-ndim-1 .. ndim).
function M.expand_dims(x, axis)
  local v = args.parse('expand_dims', EXPAND_DIMS_SIGNATURE, 1, axis)
  local d = args.array('expand_dims', 'x', x)
  local nd = d.ptr.nd
  axis = v.axis
  if axis == nil then error('expand_dims: axis is required', 2) end
  axis = U.axis('expand_dims', axis, nd + 1)
  local s, shape = d.shape, {}
  for i = 1, axis do shape[i] = s[i] end
  shape[axis + 1] = 1
  for i = axis + 1, nd do shape[i + 1] = s[i] end
  return reshape(x, shape)
end

-- F.squeeze(x, axis = nil): drops the size-1 axes (all of them, or those in
-- axis: a number or a table of numbers).
function M.squeeze(x, axis)
  local v = args.parse('squeeze', SQUEEZE_SIGNATURE, 1, axis)
  local d = args.array('squeeze', 'x', x)
  local nd = d.ptr.nd
  local s = d.shape
  axis = v.axis
  local drop = {}
  if axis == nil or axis == false then
    for i = 1, nd do if s[i] == 1 then drop[i] = true end end
  else
    local list = type(axis) == 'number' and { axis } or axis
    if type(list) ~= 'table' then error('squeeze: axis must be an integer or a table of integers', 2) end
    for k = 1, #list do
      local a = U.axis('squeeze', list[k], nd)
      if s[a + 1] ~= 1 then
        error(string.format('squeeze: cannot squeeze axis %d of size %d (only size-1 axes can be removed)',
          list[k], s[a + 1]), 2)
      end
      drop[a + 1] = true
    end
  end
  local shape = {}
  for i = 1, nd do if not drop[i] then shape[#shape + 1] = s[i] end end
  return reshape(x, shape)
end

-- F.flatten(x): the 1-D reshape of x.
function M.flatten(x)
  local d = args.array('flatten', 'x', x)
  return reshape(x, { d.size })
end

local function identity_perm(nd)
  local p = {}
  for i = 1, nd do p[i] = i - 1 end
  return p
end

local function permuted(x, perm)
  for i = 1, #perm do
    if perm[i] ~= i - 1 then return transpose(x, perm) end
  end
  return Variable.as_variable(x)
end

-- F.swapaxes(x, axis1, axis2)
function M.swapaxes(x, axis1, axis2)
  local v = args.parse('swapaxes', SWAPAXES_SIGNATURE, 2, axis1, axis2)
  local d = args.array('swapaxes', 'x', x)
  local nd = d.ptr.nd
  if v.axis1 == nil or v.axis2 == nil then error('swapaxes: axis1 and axis2 are required', 2) end
  local a = U.axis('swapaxes', v.axis1, nd, 'axis1')
  local b = U.axis('swapaxes', v.axis2, nd, 'axis2')
  local p = identity_perm(nd)
  p[a + 1], p[b + 1] = b, a
  return permuted(x, p)
end

-- F.moveaxis(x, source, destination): numbers or tables of numbers
-- (numpy.moveaxis).
function M.moveaxis(x, source, destination)
  local v = args.parse('moveaxis', MOVEAXIS_SIGNATURE, 2, source, destination)
  local d = args.array('moveaxis', 'x', x)
  local nd = d.ptr.nd
  local src = type(v.source) == 'number' and { v.source } or v.source
  local dst = type(v.destination) == 'number' and { v.destination } or v.destination
  if type(src) ~= 'table' or type(dst) ~= 'table' then
    error('moveaxis: source and destination must be integers or tables of integers', 2)
  end
  if #src ~= #dst then
    error(string.format('moveaxis: source has %d axes but destination has %d (they must match)', #src, #dst), 2)
  end
  local seen_s, seen_d = {}, {}
  local s, t = {}, {}
  for k = 1, #src do
    s[k] = U.axis('moveaxis', src[k], nd, 'source axis')
    t[k] = U.axis('moveaxis', dst[k], nd, 'destination axis')
    if seen_s[s[k]] then error('moveaxis: repeated axis in source: ' .. src[k], 2) end
    if seen_d[t[k]] then error('moveaxis: repeated axis in destination: ' .. dst[k], 2) end
    seen_s[s[k]], seen_d[t[k]] = true, true
  end
  -- the remaining axes keep their order; the moved ones go to their slots
  local rest = {}
  for a = 0, nd - 1 do if not seen_s[a] then rest[#rest + 1] = a end end
  local perm, r = {}, 1
  local at = {}
  for k = 1, #t do at[t[k]] = s[k] end
  for pos = 0, nd - 1 do
    if at[pos] ~= nil then perm[pos + 1] = at[pos] else perm[pos + 1] = rest[r]; r = r + 1 end
  end
  return permuted(x, perm)
end

-- F.rollaxis(x, axis, start = 0): numpy.rollaxis (axis moves to just before
-- position start, 0..ndim).
function M.rollaxis(x, axis, start)
  local v = args.parse('rollaxis', ROLLAXIS_SIGNATURE, 2, axis, start)
  local d = args.array('rollaxis', 'x', x)
  local nd = d.ptr.nd
  if v.axis == nil then error('rollaxis: axis is required', 2) end
  local a = U.axis('rollaxis', v.axis, nd)
  local st = U.int('rollaxis', v.start, 'start', 0)
  if st < -nd or st > nd then
    error(string.format('rollaxis: start %d is out of range for a %d-d input (expected %d..%d)', st, nd, -nd, nd), 2)
  end
  if st < 0 then st = st + nd end
  local perm = {}
  for i = 0, nd - 1 do if i ~= a then perm[#perm + 1] = i end end
  local pos = st > a and st - 1 or st
  table.insert(perm, pos + 1, a)
  return permuted(x, perm)
end

return M

-- functions/math/sum.lua: F.sum(x, {axis =, keepdims =}); axes are 0-based
-- (negative counts from the end), a table of axes reduces several.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'

local M = {}

local OPTIONS = args.accept { 'axis', 'keepdims' }

local Sum = FunctionNode:extend('Sum')
M.Sum = Sum

function Sum:forward(inputs)
  local x = inputs[1]
  self._in_shape = x.shape
  return { T.sum(x, { axis = self.axis, keepdims = self.keepdims }) }
end

function Sum:backward(idx, gys)
  local reshape = require('chainer.functions.array.reshape').reshape
  local broadcast_to = require('chainer.functions.array.broadcast_to').broadcast_to
  local gy = gys[1]
  local in_shape = self._in_shape
  local axes = self._axes
  if axes and not self.keepdims and #in_shape > 0 then
    -- put the reduced axes back as size-1 axes
    local shape = {}
    for i = 1, #in_shape do shape[i] = in_shape[i] end
    for k = 1, #axes do shape[axes[k] + 1] = 1 end
    gy = reshape(gy, shape)
  elseif not axes and self.keepdims then
    -- already all-ones shape
  end
  return { broadcast_to(gy, in_shape) }
end

local function parse_opts(x, opts, keepdims)
  local axis
  if type(opts) == 'number' then
    axis = opts
  elseif type(opts) == 'table' and opts[1] ~= nil then
    axis = opts -- a list of axes
  elseif opts ~= nil then
    opts = args.options('sum', opts, OPTIONS, 3)
    axis, keepdims = opts.axis, opts.keepdims
  end
  return axis, keepdims and true or false
end

-- F.sum(x), F.sum(x, {axis = 1, keepdims = true}), F.sum(x, 1), F.sum(x, {0, 2})
function M.sum(x, opts, keepdims)
  local d = args.array('sum', 'x', x)
  local axis
  axis, keepdims = parse_opts(x, opts, keepdims)
  local f = setmetatable({}, Sum)
  local nd = d.ptr.nd
  if axis ~= nil then
    local list = type(axis) == 'number' and { axis } or axis
    local axes = {}
    for k = 1, #list do
      local a = list[k]
      if type(a) ~= 'number' or a ~= math.floor(a) or a < -nd or a >= nd then
        error(string.format('sum: axis %s is out of range for a %d-d input (expected %d..%d)',
          tostring(a), nd, -nd, nd - 1), 2)
      end
      axes[k] = a < 0 and a + nd or a
    end
    f._axes = axes
    f.axis = axes
  end
  f.keepdims = keepdims
  return f:apply({ x })[1]
end

return M

-- functions/math/minmax.lua: F.max, F.min (x, {axis =, keepdims =}) and
-- F.argmax, F.argmin (x, {axis =}).
--
-- As in Chainer, the gradient of max/min goes to every element equal to
-- the result (ties all receive it); it is linear in the upstream gradient,
-- so double backprop works.  argmax/argmin return int32 Variables that are
-- not connected to the graph.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'

local M = {}

local REDUCE_OPTIONS = args.accept { 'axis', 'keepdims' }
local ARG_OPTIONS = args.accept { 'axis' }

local function parse(fn, x, opts)
  local d = args.array(fn, 'x', x, 3)
  local axis, keepdims
  if type(opts) == 'number' or (type(opts) == 'table' and opts[1] ~= nil) then axis = opts -- Chainer's positional axis
  else
    opts = args.options(fn, opts, REDUCE_OPTIONS, 3)
    axis, keepdims = opts.axis, opts.keepdims
  end
  return d, H.axes(axis, d.ptr.nd, fn, 3), keepdims and true or false
end

local function make(name, cls_name, tfn)
  local cls = FunctionNode:extend(cls_name)
  function cls:forward(inputs)
    local x = inputs[1]
    self:retain_inputs({ 1 })
    self._shape = x.shape
    local y = tfn(x, { axis = self.axes, keepdims = self.keepdims })
    self._y = y
    return { y }
  end
  function cls:backward(idx, gys)
    local x = self:get_retained_inputs()[1]._data
    local shape = self._shape
    local yk = self._y
    if not self.keepdims then yk = yk:reshape(H.keepdims_shape(shape, self.axes)) end
    local mask = T.eq(x, yk):astype(x.dtype)
    return { H.unreduce(gys[1], shape, self.axes, self.keepdims) * mask }
  end
  local function wrapper(x, opts)
    local d, axes, keepdims = parse(name, x, opts)
    if d.ptr.numel == 0 then error(name .. ': x is empty (zero-size reduction has no identity)', 2) end
    local f = setmetatable({}, cls)
    f.axes, f.keepdims = axes, keepdims
    return f:apply({ x })[1]
  end
  return cls, wrapper
end

M.Max, M.max = make('max', 'Max', T.max)
M.Min, M.min = make('min', 'Min', T.min)

local function make_arg(name, tfn)
  return function(x, opts)
    local d = args.array(name, 'x', x, 2)
    local axis = H.number_or_option(name, opts, ARG_OPTIONS, 'axis', nil)
    if axis == false then axis = nil end
    if axis ~= nil then axis = H.axis(axis, d.ptr.nd, name, 2) end
    if d.ptr.numel == 0 then error(name .. ': x is empty', 2) end
    return Variable.as_variable(tfn(d, axis):astype('int32'))
  end
end

M.argmax = make_arg('argmax', T.argmax)
M.argmin = make_arg('argmin', T.argmin)

return M

-- functions/math/_helpers.lua: shared pieces of the math and activation
-- families: lazy access to F (the families are loaded by chainer.functions
-- itself), axis normalisation for reductions, and a maker for elementwise
-- unary functions whose backward is composed of other differentiable
-- functions.
local args = require 'chainer._args'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'

local type, error, setmetatable = type, error, setmetatable

local H = {}

local Ftab
-- chainer.functions, loaded on first use (inside backward passes).
function H.F()
  Ftab = Ftab or require 'chainer.functions'
  return Ftab
end

-- Same dtype for two tensors (Chainer does not promote between arrays).
function H.same_dtype(a, b, fn, na, nb, level)
  if a.ptr.dt ~= b.ptr.dt then
    error(string.format('%s: %s and %s have different dtypes (%s and %s); cast one with astype first',
      fn, na, nb, a.dtype, b.dtype), (level or 2) + 1)
  end
end

-- The tensors of two float operands of one dtype, named na and nb.
function H.float_pair(fn, na, a, nb, b, level)
  level = (level or 2) + 1
  local da, db = args.float_array(fn, na, a, level), args.float_array(fn, nb, b, level)
  H.same_dtype(da, db, fn, na, nb, level)
  return da, db
end

-- Fails (at level) unless tensor t, named name, broadcasts to exactly
-- shape, the shape of ref_name (zeta's x to q, polygamma's n to x).
function H.want_broadcast(fn, name, t, ref_name, shape, level)
  local ok, probe = pcall(t.broadcast_to, t, shape)
  local same = ok and #probe.shape == #shape
  for i = 1, same and #shape or 0 do same = same and probe.shape[i] == shape[i] end
  if not same then
    local shape_str = require('chainer.tensor').shape_str
    error(string.format('%s: %s (shape %s) must have the shape of %s (%s) or broadcast to it', fn, name,
      shape_str(t.shape), ref_name, shape_str(shape)), (level or 2) + 1)
  end
end

function H.wants(idx, i)
  for k = 1, #idx do if idx[k] == i then return true end end
  return false
end

-- args.options where a bare number stands for option `key`, as Chainer's
-- positional argument: F.normalize(x, 1e-6) or F.normalize(x, {eps = 1e-6}).
function H.options_or_number(fn, opts, accepted, key, level)
  if type(opts) == 'number' then opts = { [key] = opts } end
  return args.options(fn, opts, accepted, (level or 2) + 1)
end

-- The value of the one option that may also be given alone as a number
-- (F.elu(x, 2) or F.elu(x, {alpha = 2})), default when absent.
function H.number_or_option(fn, opts, accepted, key, default, level)
  if type(opts) == 'number' then return opts end
  local value = args.options(fn, opts, accepted, (level or 2) + 1)[key]
  if value == nil then return default end
  return value
end

-- A required argument that Chainer's keyword form f(x, key=v) may give as
-- {key = v} (checked by args.options: no other key); v, or the argument as
-- it came when it is not such a table.
function H.keyword_form(fn, v, accepted, key, level)
  if args.is_options(v) and next(v) ~= nil then return args.options(fn, v, accepted, (level or 2) + 1)[key] end
  return v
end

-- Normalises an axis (0-based, negative from the end) for an nd-d input.
function H.axis(a, nd, fn, level, name)
  if type(a) ~= 'number' or a ~= math.floor(a) then
    error(string.format('%s: %s must be an integer (got %s)', fn, name or 'axis', tostring(a)), (level or 2) + 1)
  end
  if a < -nd or a >= nd then
    error(string.format('%s: %s %d is out of range for a %d-d input (expected %d..%d)', fn, name or 'axis', a, nd,
      -nd, nd - 1), (level or 2) + 1)
  end
  return a < 0 and a + nd or a
end

-- Normalised axes (nil, a number or a list) as a sorted list, or nil for all.
function H.axes(axis, nd, fn, level)
  if axis == nil or axis == false then return nil end
  local list = type(axis) == 'number' and { axis } or axis
  if type(list) ~= 'table' then
    error(string.format('%s: axis must be an integer, a list of integers or nil (got %s)', fn, type(axis)), (level or 2) + 1)
  end
  local out, seen = {}, {}
  for k = 1, #list do
    local a = H.axis(list[k], nd, fn, (level or 2) + 1)
    if seen[a] then error(string.format('%s: axis %d is given twice', fn, list[k]), (level or 2) + 1) end
    seen[a] = true
    out[#out + 1] = a
  end
  table.sort(out)
  return out
end

-- Shape of x with the reduced axes (sorted list, or nil for all) set to 1.
function H.keepdims_shape(shape, axes)
  local s = {}
  for i = 1, #shape do s[i] = shape[i] end
  if axes == nil then
    for i = 1, #s do s[i] = 1 end
  else
    for k = 1, #axes do s[axes[k] + 1] = 1 end
  end
  return s
end

-- gy (the gradient of a reduction without keepdims) broadcast back to shape.
function H.unreduce(gy, shape, axes, keepdims)
  local F = H.F()
  if not keepdims then gy = F.reshape(gy, H.keepdims_shape(shape, axes)) end
  return F.broadcast_to(gy, shape)
end

-- Makes an elementwise unary function:
--   spec.name     user name ('sin'), used in errors
--   spec.forward  function(x tensor) -> y tensor
--   spec.retain   'x', 'y', 'xy' or nil: what backward needs
--   spec.grad     function(x, y, gy, node) -> gx (Variables), or nil when
--                 Chainer defines no gradient
-- Returns the FunctionNode class and the wrapper F.<name>(x).
function H.unary(spec)
  local name = spec.name
  local cls = FunctionNode:extend(spec.class or name)
  local fwd, grad = spec.forward, spec.grad
  local rx = spec.retain == 'x' or spec.retain == 'xy'
  local ry = spec.retain == 'y' or spec.retain == 'xy'
  function cls:forward(inputs)
    if rx then self:retain_inputs({ 1 }) end
    if ry then self:retain_outputs({ 1 }) end
    return { fwd(inputs[1]) }
  end
  function cls:backward(idx, gys)
    local x = rx and self:get_retained_inputs()[1] or nil
    local y = ry and self:get_retained_outputs()[1] or nil
    return { grad(x, y, gys[1], self) }
  end
  local function wrapper(x)
    args.float_array(name, 'x', x)
    return setmetatable({}, cls):apply({ x })[1]
  end
  return cls, wrapper
end

-- Forward-only elementwise functions (floor, ceil, ...): Chainer returns a
-- Variable that is not connected to any graph.
function H.forward_only(name, tfn)
  return function(x)
    local d = args.array(name, 'x', x)
    return Variable.as_variable(tfn(d))
  end
end

return H

-- tensor/elementwise.lua: arithmetic, comparisons, logic and math functions
-- (NumPy ufunc semantics), their in-place forms, clip, where, axpby and addmul.
--
-- The wrappers are thin on purpose: the autograd layer calls them for every
-- graph node.  Each one is a closure made once at load time; a call does one
-- type() dispatch (tensor op tensor, or tensor op Lua number) and one C call.
local M = require 'chainer.tensor.core'
local ffi, C = M.ffi, M.C
local wrap, box, is_tensor = M.wrap, M.box, M.is_tensor
local methods = M.methods
local type, error = type, error
local ffi_string = ffi.string

-- A Lua number is a weak scalar; it counts as a Python float when it is not
-- integral (or does not fit int64), otherwise as a Python int: int32 * 2 stays
-- int32, int32 * 2.5 gives float64, float32 + anything stays float32.
local function scalar_is_float(s)
  if s % 1 ~= 0 or s >= 9223372036854775807 or s < -9223372036854775807 then return 1 end
  return 0
end
M.scalar_is_float = scalar_is_float

local function fail(level)
  error(ffi_string(C.ch_last_error()), level + 1)
end

-- Turns a non-tensor operand into a tensor: booleans become 0-d bool
-- tensors (a bool never lifts the other operand's dtype), numbers 0-d
-- tensors of the default float dtype, nested tables arrays.
local function coerce(v, fn, name, level)
  local tv = type(v)
  if tv == 'boolean' then return M.array(v, 'bool') end
  if tv == 'number' or tv == 'table' then return M.array(v) end
  error(string.format('%s: argument %s must be a tensor, a number or a boolean (got %s)', fn, name, tv), level or 3)
end
M.coerce_operand = coerce

-- Each op as T.name, t:name and the in-place t:name_.
local function register(ops, make, make_inplace)
  for name, op in pairs(ops) do
    local f = make(op, name)
    M[name] = f
    methods[name] = f
    methods[name .. '_'] = make_inplace(op, name)
  end
end

-- NumPy's other names for ops (aliases: alias -> op name), in all three forms.
local function register_aliases(aliases)
  for alias, name in pairs(aliases) do
    M[alias] = M[name]
    methods[alias] = M[name]
    methods[alias .. '_'] = methods[name .. '_']
  end
end

---------------------------------------------------------------------------
-- binary ops
---------------------------------------------------------------------------
local binary_ops = M.ops.binary_op   -- name -> C code, from the op list
M.binary_ops = binary_ops

-- Runs op on (a, b) into o (or a new tensor in box[0]); returns the status.
-- Raising is left to the callers so that errors point at the user's line.
-- (No tail calls here or in the wrappers below, not even of C functions:
-- LuaJIT counts every tail call in a trace against its loop-unroll limit,
-- and a backward pass or a model's forward then never compiles whole.)
local function binary_call(op, name, a, b, o, res)
  local status
  if type(b) == 'number' and is_tensor(a) then
    status = C.ch_binary_scalar(op, a.ptr, b, scalar_is_float(b), 0, o, res)
  elseif type(a) == 'number' and is_tensor(b) then
    status = C.ch_binary_scalar(op, b.ptr, a, scalar_is_float(a), 1, o, res)
  else
    if not is_tensor(a) then a = coerce(a, name, 'a', 4) end
    if not is_tensor(b) then b = coerce(b, name, 'b', 4) end
    status = C.ch_binary(op, a.ptr, b.ptr, o, res)
  end
  return status
end

-- f(a, b, [out]): a or b may be a Lua number (weak scalar) or boolean.
local function make_binary(op, name)
  return function(a, b, out)
    if out ~= nil then
      if not is_tensor(out) then
        error(string.format('%s: out must be a tensor (got %s)', name, type(out)), 2)
      end
      if binary_call(op, name, a, b, out.ptr, nil) ~= 0 then fail(2) end
      return out
    end
    if binary_call(op, name, a, b, nil, box) ~= 0 then fail(2) end
    local y = wrap(box[0])
    return y
  end
end

-- In-place form: t:add_(b) writes into t (keeping its dtype) and returns t.
local function make_binary_inplace(op, name)
  return function(t, b)
    if not is_tensor(t) then error(string.format('%s_: expected a tensor (got %s)', name, type(t)), 2) end
    if binary_call(op, name, t, b, t.ptr, nil) ~= 0 then fail(2) end
    return t
  end
end

register(binary_ops, make_binary, make_binary_inplace)

local binary_aliases = {
  true_divide = 'div', divide = 'div', power = 'pow', remainder = 'mod', subtract = 'sub',
  multiply = 'mul', equal = 'eq', not_equal = 'ne', less = 'lt', less_equal = 'le',
  greater = 'gt', greater_equal = 'ge',
}
register_aliases(binary_aliases)

---------------------------------------------------------------------------
-- unary ops
---------------------------------------------------------------------------
local unary_ops = M.ops.unary_op   -- name -> C code, from the op list
M.unary_ops = unary_ops

local function make_unary(op, name)
  return function(x, out)
    if not is_tensor(x) then x = coerce(x, name, 'x') end
    if out ~= nil then
      if not is_tensor(out) then
        error(string.format('%s: out must be a tensor (got %s)', name, type(out)), 2)
      end
      if C.ch_unary(op, x.ptr, out.ptr, nil) ~= 0 then fail(2) end
      return out
    end
    if C.ch_unary(op, x.ptr, nil, box) ~= 0 then fail(2) end
    local y = wrap(box[0])
    return y
  end
end

local function make_unary_inplace(op, name)
  return function(t)
    if not is_tensor(t) then error(string.format('%s_: expected a tensor (got %s)', name, type(t)), 2) end
    if C.ch_unary(op, t.ptr, t.ptr, nil) ~= 0 then fail(2) end
    return t
  end
end

register(unary_ops, make_unary, make_unary_inplace)

local unary_aliases = { negative = 'neg', absolute = 'abs', fix = 'trunc' }
register_aliases(unary_aliases)

---------------------------------------------------------------------------
-- clip, where, axpby
---------------------------------------------------------------------------
local nan = 0 / 0

-- clip(x, lo, hi, [out]); nil means unbounded on that side.
function M.clip(x, lo, hi, out)
  if not is_tensor(x) then x = coerce(x, 'clip', 'x') end
  if lo ~= nil and type(lo) ~= 'number' then
    error(string.format('clip: lo must be a number or nil (got %s)', type(lo)), 2)
  end
  if hi ~= nil and type(hi) ~= 'number' then
    error(string.format('clip: hi must be a number or nil (got %s)', type(hi)), 2)
  end
  if out ~= nil then
    if C.ch_clip(x.ptr, lo or nan, hi or nan, out.ptr, nil) ~= 0 then fail(2) end
    return out
  end
  if C.ch_clip(x.ptr, lo or nan, hi or nan, nil, box) ~= 0 then fail(2) end
  return wrap(box[0])
end
methods.clip = M.clip
function methods.clip_(t, lo, hi)
  if C.ch_clip(t.ptr, lo or nan, hi or nan, t.ptr, nil) ~= 0 then fail(2) end
  return t
end

-- A 0-d tensor holding a Lua scalar next to a tensor of dtype `other`
-- (weak-scalar rules), or of the default float dtype when there is none.
local function scalar_tensor(v, other)
  local code
  if type(v) == 'boolean' then
    code, v = 0, v and 1 or 0
  elseif other ~= nil then
    code = C.ch_promote_scalar(other.ptr.dt, scalar_is_float(v), 0)
  else
    code = M.dtype_code(M.default_float)
  end
  if C.ch_full(code, 0, nil, v, -1, box) ~= 0 then fail(3) end
  return wrap(box[0])
end

-- where(cond, a, b): a where cond is true, b elsewhere (broadcasting);
-- a and b may be numbers.
function M.where(cond, a, b)
  if not is_tensor(cond) then
    if type(cond) == 'table' or type(cond) == 'boolean' then
      cond = M.array(cond, type(cond) == 'boolean' and 'bool' or nil)
    else
      error(string.format('where: cond must be a tensor (got %s)', type(cond)), 2)
    end
  end
  local ta, tb = is_tensor(a), is_tensor(b)
  if not ta then
    if type(a) ~= 'number' and type(a) ~= 'boolean' then a = coerce(a, 'where', 'a')
    else a = scalar_tensor(a, tb and b or nil) end
  end
  if not tb then
    if type(b) ~= 'number' and type(b) ~= 'boolean' then b = coerce(b, 'where', 'b')
    else b = scalar_tensor(b, a) end
  end
  if C.ch_where(cond.ptr, a.ptr, b.ptr, nil, box) ~= 0 then fail(2) end
  return wrap(box[0])
end
methods.where = M.where

-- axpby(a, x, b, y): y = a*x + b*y in place (same shapes); returns y.
function M.axpby(a, x, b, y)
  if not is_tensor(x) or not is_tensor(y) then
    error('axpby: x and y must be tensors', 2)
  end
  if C.ch_axpby(a, x.ptr, b, y.ptr) ~= 0 then fail(2) end
  return y
end

-- addmul(acc, x, y): acc += x * y in place (x * y broadcasts to acc's
-- shape); returns acc.  Same values as T.add(acc, T.mul(x, y), acc),
-- without the product as a tensor of its own.
function M.addmul(acc, x, y)
  if not is_tensor(acc) or not is_tensor(x) or not is_tensor(y) then
    error(string.format('addmul: acc, x and y must be tensors (got %s, %s, %s)',
      is_tensor(acc) and 'tensor' or type(acc), is_tensor(x) and 'tensor' or type(x),
      is_tensor(y) and 'tensor' or type(y)), 2)
  end
  if C.ch_addmul(acc.ptr, x.ptr, y.ptr) ~= 0 then fail(2) end
  return acc
end

return M

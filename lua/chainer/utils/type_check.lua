-- utils/type_check.lua: Chainer's type checking of function inputs.
--
--   function Linear:check_type_forward(in_types)
--     local tc = require 'chainer.utils.type_check'
--     tc.argname(in_types, {'x', 'W'})
--     local x, W = in_types[1], in_types[2]
--     tc.expect(in_types:size():eq(2),
--               x.ndim:eq(2),
--               x.dtype.kind:eq('f'),
--               x.shape[1]:eq(W.shape[1]))
--   end
--
-- A failure reads like Chainer's:
--   Invalid operation is performed in: Linear (Forward)
--   Expect: x.shape[1] == W.shape[1]
--   Actual: 3 != 4
--
-- Lua's == and < must return booleans, so comparisons are methods (eq, ne,
-- lt, le, gt, ge) or functions (tc.eq(a, b), ...); arithmetic (+ - * / %
-- ^ and unary minus) builds expressions with the usual operators.
-- in_types is a Lua sequence (in_types[1] is the first input); shape[i]
-- takes an axis, 0-based like every tensor position (negative from the end).
local T = require 'chainer.tensor'

local M = {}

local Expr = {}
Expr.__name = 'Expr'
M.Expr = Expr

local methods = {}
local attr_names = { shape = true, ndim = true, dtype = true, size = true, kind = true, itemsize = true }

local function is_expr(v) return getmetatable(v) == Expr end
M.is_expr = is_expr

local function mk(t) return setmetatable(t, Expr) end

-- kinds: 'const' (value), 'var' (name, value), 'attr' (obj, name),
-- 'item' (obj, key), 'binop' (op, lhs, rhs, prio), 'unop' (op, x),
-- 'call' (fn, name, args), 'cmp' (op, lhs, rhs)

Expr.__index = function(e, k)
  local m = methods[k]
  if m ~= nil then return m end
  if type(k) == 'number' then return mk({ _kind = 'item', _obj = e, _key = k }) end
  if type(k) == 'string' then return mk({ _kind = 'attr', _obj = e, _name = k }) end
  return nil
end

local function wrap(v)
  if is_expr(v) then return v end
  return mk({ _kind = 'const', _value = v })
end

local prio = { ['+'] = 4, ['-'] = 4, ['*'] = 5, ['/'] = 5, ['%'] = 5, ['^'] = 7 }
local function binop(op)
  return function(a, b) return mk({ _kind = 'binop', _op = op, _lhs = wrap(a), _rhs = wrap(b) }) end
end
Expr.__add, Expr.__sub, Expr.__mul = binop('+'), binop('-'), binop('*')
Expr.__div, Expr.__mod, Expr.__pow = binop('/'), binop('%'), binop('^')
Expr.__unm = function(a) return mk({ _kind = 'unop', _op = '-', _x = a }) end
Expr.__call = function(e, ...)
  return mk({ _kind = 'call', _fn = e, _args = { n = select('#', ...), ... } })
end

---------------------------------------------------------------------------
-- evaluation
---------------------------------------------------------------------------
local dtype_kind = {
  bool = 'b', int8 = 'i', int16 = 'i', int32 = 'i', int64 = 'i', uint8 = 'u',
  float16 = 'f', float32 = 'f', float64 = 'f',
}

-- A dtype value: its name, with `kind` and `itemsize` attributes.
local function get_attr(obj, name)
  if type(obj) == 'table' and obj.__typeinfo then
    local t = obj.tensor
    if name == 'shape' then return t.shape
    elseif name == 'ndim' then return t.ptr.nd
    elseif name == 'dtype' then return t.dtype
    elseif name == 'size' then return tonumber(t.ptr.numel)
    end
  end
  if type(obj) == 'string' and dtype_kind[obj] then
    if name == 'kind' then return dtype_kind[obj] end
    if name == 'itemsize' then return tonumber(T.C.ch_dtype_size(T.dtype_codes[obj])) end
  end
  if type(obj) == 'table' then return obj[name] end
  error(string.format('type_check: cannot read attribute %s of a %s', name, type(obj)), 0)
end

local function get_item(obj, key)
  if type(obj) == 'table' and obj.__shape then
    local n = #obj
    local k = key
    if k < 0 then k = k + n end
    if k < 0 or k >= n then
      error(string.format('type_check: axis %d is out of range for shape of %d dimensions', key, n), 0)
    end
    return obj[k + 1]
  end
  if type(obj) == 'table' then return obj[key] end
  error(string.format('type_check: cannot index a %s', type(obj)), 0)
end

local arith = {
  ['+'] = function(a, b) return a + b end, ['-'] = function(a, b) return a - b end,
  ['*'] = function(a, b) return a * b end, ['/'] = function(a, b) return a / b end,
  ['%'] = function(a, b) return a % b end, ['^'] = function(a, b) return a ^ b end,
}

local function eval(e)
  if not is_expr(e) then return e end
  local k = rawget(e, '_kind')
  if k == 'const' or k == 'var' then return rawget(e, '_value') end
  if k == 'attr' then
    local v = get_attr(eval(rawget(e, '_obj')), rawget(e, '_name'))
    if rawget(e, '_name') == 'shape' and type(v) == 'table' then v = setmetatable(v, { __index = { __shape = true } }) end
    return v
  end
  if k == 'item' then return get_item(eval(rawget(e, '_obj')), rawget(e, '_key')) end
  if k == 'binop' then return arith[rawget(e, '_op')](eval(rawget(e, '_lhs')), eval(rawget(e, '_rhs'))) end
  if k == 'unop' then return -eval(rawget(e, '_x')) end
  if k == 'call' then
    local f = eval(rawget(e, '_fn'))
    local args = rawget(e, '_args')
    local vals = {}
    for i = 1, args.n do vals[i] = eval(args[i]) end
    return f(unpack(vals, 1, args.n))
  end
  if k == 'size' then return rawget(e, '_value') end
  if k == 'cmp' then return M._compare(e) end
  error('type_check: unknown expression', 0)
end
M.eval = eval

---------------------------------------------------------------------------
-- printing
---------------------------------------------------------------------------
local function value_str(v)
  if type(v) == 'string' then return v end
  if type(v) == 'table' then
    if v.__shape then return T.shape_str(v) end
    if v.__typeinfo then return 'TypeInfo' end
    if #v > 0 then return T.shape_str(v) end
  end
  return tostring(v)
end
M.value_str = value_str

local function expr_str(e, parent_prio)
  if not is_expr(e) then return value_str(e) end
  local k = rawget(e, '_kind')
  parent_prio = parent_prio or 0
  if k == 'const' then return value_str(rawget(e, '_value')) end
  if k == 'var' then return rawget(e, '_name') end
  if k == 'attr' then return expr_str(rawget(e, '_obj'), 10) .. '.' .. rawget(e, '_name') end
  if k == 'item' then return expr_str(rawget(e, '_obj'), 10) .. '[' .. tostring(rawget(e, '_key')) .. ']' end
  if k == 'size' then return rawget(e, '_name') .. '.size()' end
  if k == 'binop' then
    local op = rawget(e, '_op')
    local p = prio[op]
    local s = expr_str(rawget(e, '_lhs'), p) .. ' ' .. (op == '^' and '**' or op) .. ' ' ..
      expr_str(rawget(e, '_rhs'), p + 1)
    if p < parent_prio then s = '(' .. s .. ')' end
    return s
  end
  if k == 'unop' then return '-' .. expr_str(rawget(e, '_x'), 8) end
  if k == 'call' then
    local args = rawget(e, '_args')
    local parts = {}
    for i = 1, args.n do parts[i] = expr_str(args[i]) end
    return expr_str(rawget(e, '_fn'), 10) .. '(' .. table.concat(parts, ', ') .. ')'
  end
  if k == 'cmp' then
    return expr_str(rawget(e, '_lhs'), 3) .. ' ' .. rawget(e, '_op') .. ' ' .. expr_str(rawget(e, '_rhs'), 3)
  end
  return '?'
end
M.expr_str = expr_str
Expr.__tostring = function(e) return expr_str(e) end

---------------------------------------------------------------------------
-- comparisons
---------------------------------------------------------------------------
local negate = { ['=='] = '!=', ['!='] = '==', ['<'] = '>=', ['<='] = '>', ['>'] = '<=', ['>='] = '<' }

local function values_equal(a, b)
  if type(a) == 'table' and type(b) == 'table' then
    if #a ~= #b then return false end
    for i = 1, #a do if a[i] ~= b[i] then return false end end
    return true
  end
  return a == b
end

local cmp_fn = {
  ['=='] = values_equal,
  ['!='] = function(a, b) return not values_equal(a, b) end,
  ['<'] = function(a, b) return a < b end, ['<='] = function(a, b) return a <= b end,
  ['>'] = function(a, b) return a > b end, ['>='] = function(a, b) return a >= b end,
}

local function cmp(op)
  return function(a, b) return mk({ _kind = 'cmp', _op = op, _lhs = wrap(a), _rhs = wrap(b) }) end
end
M.eq, M.ne, M.lt, M.le, M.gt, M.ge = cmp('=='), cmp('!='), cmp('<'), cmp('<='), cmp('>'), cmp('>=')
methods.eq, methods.ne, methods.lt, methods.le, methods.gt, methods.ge = M.eq, M.ne, M.lt, M.le, M.gt, M.ge
methods.eval = eval

function M._compare(e)
  local a, b = eval(rawget(e, '_lhs')), eval(rawget(e, '_rhs'))
  return cmp_fn[rawget(e, '_op')](a, b), a, b
end

---------------------------------------------------------------------------
-- InvalidType and expect
---------------------------------------------------------------------------
local InvalidType = {}
InvalidType.__index = InvalidType
InvalidType.__tostring = function(err)
  local s = 'Expect: ' .. err.expect .. '\nActual: ' .. err.actual
  if err.where then s = 'Invalid operation is performed in: ' .. err.where .. '\n' .. s end
  return s
end
M.InvalidType = InvalidType

-- Raises InvalidType(expect, actual) (a table error with a readable
-- tostring; FunctionNode.apply turns it into a message naming the function).
function M.invalid_type(expect, actual)
  error(setmetatable({ invalid_type = true, expect = expect, actual = actual }, InvalidType), 0)
end

-- The message FunctionNode.apply raises for a failed check.
function M.format_error(err, label, direction)
  return 'Invalid operation is performed in: ' .. label .. ' (' .. direction .. ')\n' ..
    'Expect: ' .. err.expect .. '\nActual: ' .. err.actual
end

-- Evaluates each condition in order; raises InvalidType on the first false.
-- Conditions are comparison expressions or plain booleans.
function M.expect(...)
  local n = select('#', ...)
  for i = 1, n do
    local c = select(i, ...)
    if is_expr(c) then
      if rawget(c, '_kind') ~= 'cmp' then
        error('type_check.expect: condition ' .. i .. ' is not a comparison (use :eq, :lt, ... or tc.eq(a, b))', 2)
      end
      local ok, a, b = M._compare(c)
      if not ok then
        M.invalid_type(expr_str(c), value_str(a) .. ' ' .. negate[rawget(c, '_op')] .. ' ' .. value_str(b))
      end
    elseif c == false then
      M.invalid_type('condition ' .. i, 'false')
    elseif c ~= true then
      error('type_check.expect: condition ' .. i .. ' must be a comparison expression or a boolean (got ' ..
        type(c) .. ')', 2)
    end
  end
end

-- A named constant (or function) inside expressions: tc.Variable(4, 'in_size').
function M.Variable(value, name)
  return mk({ _kind = 'var', _value = value, _name = name })
end

---------------------------------------------------------------------------
-- TypeInfo / TypeInfoTuple
---------------------------------------------------------------------------
local TypeInfoTuple = {}
TypeInfoTuple.__index = TypeInfoTuple
M.TypeInfoTuple = TypeInfoTuple

-- in_types:size() -- the number of inputs, as an expression
function TypeInfoTuple:size()
  return mk({ _kind = 'size', _value = #self, _name = rawget(self, '_name') or 'in_types' })
end

-- The types of a table of tensors, named '<name>[i]' until argname renames them.
function M.get_types(tensors, name)
  local tuple = setmetatable({ _name = name }, TypeInfoTuple)
  for i = 1, #tensors do
    tuple[i] = mk({ _kind = 'var', _name = name .. '[' .. i .. ']',
      _value = { __typeinfo = true, tensor = tensors[i] } })
  end
  return tuple
end

-- Names the inputs in messages: tc.argname(in_types, {'x', 'W', 'b'}).
function M.argname(in_types, names)
  for i = 1, math.min(#in_types, #names) do rawset(in_types[i], '_name', names[i]) end
end

-- Chainer's utility: the expected number of inputs with a clearer message.
function M.expect_size(in_types, lo, hi)
  hi = hi or lo
  local n = #in_types
  if n < lo or n > hi then
    M.invalid_type(lo == hi and ('in_types.size() == ' .. lo) or
      string.format('%d <= in_types.size() <= %d', lo, hi), tostring(n))
  end
end

return M

-- chainer.user_kernel.fusion: cuda.fuse, elementwise fusion (CuPy's fuse,
-- Chainer's cuda.fuse):
--
--   local f = cuda.fuse(function(x, y) return x * y + 1 end)
--   local z = f(a, b)             -- one elementwise kernel, any device
--
-- The Lua function is traced once per input signature (each argument's
-- dtype, or for a Lua number whether it is integral) with symbolic
-- operands: their metamethods (+ - * / % ^ and unary -) and the functions
-- of cuda.fusion record each operation as a typed C statement.  The trace
-- becomes the body of a cuda.elementwise kernel (one input parameter per
-- argument, one output per returned value), cached with the signature, so
-- the fused function runs wherever elementwise kernels run: compiled by
-- NVRTC on CUDA tensors, translated to a LuaJIT loop on CPU tensors.
--
-- Dtypes follow the tensor ops': each operation's result dtype is the
-- dtype the same tensor op gives (found by running it once on one-element
-- probes), Lua numbers are weak scalars as for tensor ops (int32 * 2 stays
-- int32, int32 * 2.5 gives float64), and a value computed from numbers
-- alone is int64, float64 or bool.
local T = require 'chainer.tensor'
local K = require 'chainer.user_kernel'
local args_layer = require 'chainer._args'

local M = {}

local FUSE_OPTIONS = args_layer.accept { 'kernel_name' }

local function compute_type(dt) return dt == 'float16' and 'float32' or dt end
local function is_float(dt) return dt == 'float16' or dt == 'float32' or dt == 'float64' end

-- A Lua number is an integral (int) or fractional (float) weak scalar,
-- as for the tensor ops.
local function number_kind(v) return T.scalar_is_float(v) == 1 and 'float' or 'int' end
local weak_ctype = { int = 'int64', float = 'float64', bool = 'bool' }

---------------------------------------------------------------------------
-- the trace
---------------------------------------------------------------------------
-- A traced value: { trace, code (a C name or literal), dtype (of an array
-- value) or weak (its kind: 'int', 'float', 'bool'), value (constants) }.
local Value = {}
local tracing = nil   -- the trace being recorded, while a fused function runs

-- Errors about the fused body: raised at the user's line, marked so that
-- the tracing wrapper passes them on untouched.
local FUSE_ERROR = '\1fuse\1'
local function ferr(fmt, ...)
  local name = tracing and tracing.name or 'fuse'
  local mark = tracing and tracing.in_body and FUSE_ERROR or ''
  args_layer.fail(mark .. string.format('fuse %s: ' .. fmt, name, ...), 3)
end

local function is_value(v) return getmetatable(v) == Value end

local function ctype(v) return v.weak and weak_ctype[v.weak] or compute_type(v.dtype) end

-- A literal C expression for the Lua number v.
local function literal(v)
  if v ~= v then return '(0.0 / 0.0)' end
  if v == math.huge then return '(1.0 / 0.0)' end
  if v == -math.huge then return '(-1.0 / 0.0)' end
  if v % 1 == 0 and math.abs(v) < 2 ^ 53 then return string.format('%d', v) end
  return string.format('%.17g', v)
end

-- A traced operand from a value or a Lua number / boolean (a constant).
local function operand(v, fname, j)
  if is_value(v) then
    if v.trace ~= tracing then ferr('%s: argument %d comes from another trace', fname, j) end
    return v
  end
  if type(v) == 'number' then
    return setmetatable({ trace = tracing, code = literal(v), weak = number_kind(v), value = v }, Value)
  end
  if type(v) == 'boolean' then
    return setmetatable({ trace = tracing, code = v and 'true' or 'false', weak = 'bool', value = v }, Value)
  end
  ferr('%s: argument %d must be a traced value or a number (got %s)', fname, j,
    T.is_tensor(v) and 'a tensor: pass tensors as arguments of the fused function' or type(v))
end

-- What stands in for an operand when the tensor op is run to find a result
-- dtype: a one-element tensor for an array value; for a weak scalar next to
-- an array, a Lua number of its kind; for weak scalars alone, tensors of
-- their C types (then the result is weak again).
local probe_rep = { int = 1, float = 0.5, bool = true }
local function probes(ops)
  local any_array = false
  for _, v in ipairs(ops) do if not v.weak then any_array = true end end
  local list = {}
  for j, v in ipairs(ops) do
    if not v.weak then list[j] = T.zeros({ 1 }, v.dtype)
    elseif any_array then list[j] = probe_rep[v.weak]
    else list[j] = T.zeros({ 1 }, weak_ctype[v.weak]) end
  end
  return list, not any_array
end

local weak_of = { int8 = 'int', uint8 = 'int', int16 = 'int', int32 = 'int', int64 = 'int', float16 = 'float',
  float32 = 'float', float64 = 'float', bool = 'bool' }

-- The result of tensor op `tname` on the operands: a new traced value
-- (without code yet) and its C compute type.
local function result_of(fname, tname, ops)
  local list, all_weak = probes(ops)
  local ok, r = pcall(T[tname], unpack(list, 1, #ops))
  if not ok then
    ferr('%s: %s', fname, (tostring(r):gsub('^.-:%d+: ', '')))
  end
  local v = { trace = tracing }
  if all_weak then v.weak = weak_of[r.dtype] else v.dtype = r.dtype end
  return setmetatable(v, Value), ctype(v)
end

-- Records `R _vN = expr;` and returns the value.
local function emit(v, expr)
  local t = v.trace
  t.n = t.n + 1
  rawset(v, 'code', '_v' .. t.n)
  t.lines[#t.lines + 1] = string.format('  %s %s = %s;', ctype(v), v.code, expr)
  return v
end

local function cast(R, v) return string.format('(%s)(%s)', R, v.code) end

---------------------------------------------------------------------------
-- the operations: name -> { tensor op (for the dtype), arity, C writer }
-- A writer gets the result's C type R, the operands a and b (nil for one
-- operand) and ctx = {fname =, res = the result value}, and returns the C
-- expression (it may emit statements of its own first).
---------------------------------------------------------------------------
local function infix(op)
  return function(R, a, b) return cast(R, a) .. ' ' .. op .. ' ' .. cast(R, b) end
end

-- the operands' common type (for comparisons): the dtype their sum has
local function common_type(fname, a, b)
  local _, CT = result_of(fname, 'add', { a, b })
  return CT
end

local function compare(op)
  return function(R, a, b, ctx)
    local CT = common_type(ctx.fname, a, b)
    return cast(CT, a) .. ' ' .. op .. ' ' .. cast(CT, b)
  end
end

-- a function of floats: computed in R when R is a float, else in double
local function math_call(cname)
  return function(R, a, b)
    local F = is_float(R) and R or 'float64'
    local call = cname .. '(' .. cast(F, a) .. (b and ', ' .. cast(F, b) or '') .. ')'
    return F == R and call or string.format('(%s)(%s)', R, call)
  end
end

-- NumPy's floored modulo (the sign of the divisor), 0 for an integer
-- division by zero, as the tensor op
local function modulo(R, a, b, ctx)
  local t = ctx.res.trace
  local n = t.n + 1
  local A, B, Mv = '_a' .. n, '_b' .. n, '_m' .. n
  local L = t.lines
  L[#L + 1] = string.format('  %s %s = %s; %s %s = %s;', R, A, cast(R, a), R, B, cast(R, b))
  if is_float(R) then
    L[#L + 1] = string.format('  %s %s = fmod(%s, %s);', R, Mv, A, B)
  else
    L[#L + 1] = string.format('  %s %s = %s == 0 ? (%s)0 : %s %% %s;', R, Mv, B, R, A, B)
  end
  return string.format('(%s != 0 && ((%s < 0) != (%s < 0))) ? %s + %s : %s', Mv, Mv, B, Mv, B, Mv)
end

-- maximum / minimum propagate NaN, as the tensor ops
local function extremum(op)
  return function(R, a, b)
    local A, B = cast(R, a), cast(R, b)
    if is_float(R) then
      return string.format('(%s %s %s || %s != %s) ? %s : %s', A, op, B, A, A, A, B)
    end
    return string.format('%s %s %s ? %s : %s', A, op, B, A, B)
  end
end

local ops = {
  add = { 'add', 2, infix('+') }, sub = { 'sub', 2, infix('-') }, mul = { 'mul', 2, infix('*') },
  div = { 'div', 2, infix('/') }, mod = { 'mod', 2, modulo },
  power = { 'pow', 2, function(R, a, b)
    if is_float(R) then return 'pow(' .. cast(R, a) .. ', ' .. cast(R, b) .. ')' end
    return string.format('(%s)pow(%s, %s)', R, cast('float64', a), cast('float64', b))
  end },
  negative = { 'neg', 1, function(R, a) return '-' .. cast(R, a) end },
  maximum = { 'maximum', 2, extremum('>') }, minimum = { 'minimum', 2, extremum('<') },
  less = { 'lt', 2, compare('<') }, less_equal = { 'le', 2, compare('<=') },
  greater = { 'gt', 2, compare('>') }, greater_equal = { 'ge', 2, compare('>=') },
  equal = { 'eq', 2, compare('==') }, not_equal = { 'ne', 2, compare('!=') },
  logical_and = { 'logical_and', 2, function(_, a, b) return cast('bool', a) .. ' && ' .. cast('bool', b) end },
  logical_or = { 'logical_or', 2, function(_, a, b) return cast('bool', a) .. ' || ' .. cast('bool', b) end },
  logical_xor = { 'logical_xor', 2, function(_, a, b) return cast('bool', a) .. ' != ' .. cast('bool', b) end },
  logical_not = { 'logical_not', 1, function(_, a) return '!' .. cast('bool', a) end },
  absolute = { 'abs', 1, function(R, a)
    if is_float(R) then return 'fabs(' .. cast(R, a) .. ')' end
    if R == 'bool' then return cast(R, a) end
    return string.format('%s < 0 ? -%s : %s', cast(R, a), cast(R, a), cast(R, a))
  end },
  square = { 'square', 1, function(R, a) return cast(R, a) .. ' * ' .. cast(R, a) end },
  reciprocal = { 'reciprocal', 1, function(R, a) return '(' .. R .. ')1 / ' .. cast(R, a) end },
  sign = { 'sign', 1, function(R, a)
    local A = cast(R, a)
    return string.format('%s > 0 ? (%s)1 : %s < 0 ? (%s)-1 : %s', A, R, A, R, A)
  end },
  relu = { 'relu', 1, function(R, a) return string.format('%s > 0 ? %s : (%s)0', cast(R, a), cast(R, a), R) end },
  sigmoid = { 'sigmoid', 1, function(R, a) return string.format('(%s)1 / ((%s)1 + exp(-%s))', R, R, cast(R, a)) end },
  isnan = { 'isnan', 1, function(_, a) return 'isnan(' .. cast('float64', a) .. ')' end },
  isinf = { 'isinf', 1, function(_, a) return 'isinf(' .. cast('float64', a) .. ')' end },
  isfinite = { 'isfinite', 1, function(_, a) return 'isfinite(' .. cast('float64', a) .. ')' end },
  arctan2 = { 'arctan2', 2, math_call('atan2') }, hypot = { 'hypot', 2, math_call('hypot') },
  fmod = { 'fmod', 2, math_call('fmod') },
}
-- one-argument math functions: cuda.fusion's (NumPy's) name -> C name
for name, cname in pairs { exp = 'exp', log = 'log', sqrt = 'sqrt', sin = 'sin', cos = 'cos', tan = 'tan',
  arcsin = 'asin', arccos = 'acos', arctan = 'atan', sinh = 'sinh', cosh = 'cosh', tanh = 'tanh',
  floor = 'floor', ceil = 'ceil', trunc = 'trunc', rint = 'rint', log10 = 'log10', log2 = 'log2',
  log1p = 'log1p', expm1 = 'expm1', exp2 = 'exp2', erf = 'erf', erfc = 'erfc', lgamma = 'lgamma',
  cbrt = 'cbrt', rsqrt = 'rsqrt' } do
  ops[name] = { T[name] and name or cname, 1, math_call(cname) }
end
ops.abs, ops.pow, ops.neg = ops.absolute, ops.power, ops.negative

local function apply(fname, ...)
  if not tracing then
    args_layer.fail(string.format('cuda.fusion.%s: only inside a function being fused by cuda.fuse', fname), 3)
  end
  local op = ops[fname]
  local n = select('#', ...)
  if n ~= op[2] then ferr('fusion.%s takes %d argument%s (got %d)', fname, op[2], op[2] == 1 and '' or 's', n) end
  local args = {}
  for j = 1, n do args[j] = operand((select(j, ...)), 'fusion.' .. fname, j) end
  local res, R = result_of('fusion.' .. fname, op[1], args)
  return emit(res, op[3](R, args[1], args[2], { fname = 'fusion.' .. fname, res = res }))
end

-- cuda.fusion: the functions a fused body may call, by NumPy's names.
M.functions = {}
for name in pairs(ops) do M.functions[name] = function(...) return apply(name, ...) end end

-- where(cond, a, b): a where cond is true, else b
function M.functions.where(c, a, b)
  if not tracing then args_layer.fail('cuda.fusion.where: only inside a function being fused by cuda.fuse', 2) end
  local C, A, B = operand(c, 'fusion.where', 1), operand(a, 'fusion.where', 2), operand(b, 'fusion.where', 3)
  local res, R = result_of('fusion.where', 'where', { C, A, B })
  return emit(res, string.format('%s ? %s : %s', cast('bool', C), cast(R, A), cast(R, B)))
end

-- astype(x, dtype): a conversion, as tensor:astype
function M.functions.astype(x, dtype)
  if not tracing then args_layer.fail('cuda.fusion.astype: only inside a function being fused by cuda.fuse', 2) end
  local X = operand(x, 'fusion.astype', 1)
  if weak_of[dtype] == nil then
    ferr("fusion.astype: dtype must be one of bool, int8, uint8, int16, int32, int64, float16, float32, " ..
      "float64 (got %s)", tostring(dtype))
  end
  local res = setmetatable({ trace = tracing, dtype = dtype }, Value)
  return emit(res, cast(compute_type(dtype), X))
end

-- a name cuda.fusion lacks is an error naming it (not a nil to call)
do
  local names = {}
  for name in pairs(M.functions) do names[#names + 1] = name end
  table.sort(names)
  local list = table.concat(names, ', ')
  setmetatable(M.functions, { __index = function(_, k)
    local msg = "cuda.fusion has no function '%s': it cannot be fused (the functions are: %s)"
    if tracing then ferr(msg, tostring(k), list) end
    args_layer.fail(string.format(msg, tostring(k), list), 2)
  end })
end

---------------------------------------------------------------------------
-- the operators of traced values
---------------------------------------------------------------------------
local function binary(fname)
  return function(a, b) return apply(fname, a, b) end
end
Value.__add, Value.__sub, Value.__mul = binary('add'), binary('sub'), binary('mul')
Value.__div, Value.__mod, Value.__pow = binary('div'), binary('mod'), binary('power')
Value.__unm = function(a) return apply('negative', a) end

local function no_control_flow(what, instead)
  return function()
    ferr('%s on a traced value cannot be fused (Lua turns it into a boolean at trace time, so a branch ' ..
      'on it would be fixed for every element): use %s', what, instead)
  end
end
Value.__lt = no_control_flow('comparing with <, <=, > or >=', 'cuda.fusion.less/greater and cuda.fusion.where')
Value.__le = Value.__lt
Value.__eq = no_control_flow('comparing with ==', 'cuda.fusion.equal and cuda.fusion.where')
Value.__concat = function() ferr('a traced value cannot be concatenated (..)') end
Value.__len = function() ferr('a traced value has no length (#): it stands for one element') end
Value.__call = function() ferr('a traced value cannot be called') end
Value.__newindex = function(_, k) ferr("a traced value has no field '%s' to set", tostring(k)) end
local reductions = { sum = true, mean = true, max = true, min = true, prod = true, argmax = true,
  argmin = true, var = true, std = true, all = true, any = true, cumsum = true }
-- the fields a traced value has (trace, code and one of dtype / weak) or
-- may lack (value: only constants have one); `x.dtype` reads the dtype
local own_fields = { trace = true, code = true, dtype = true, weak = true, value = true }
Value.__index = function(_, k)
  if own_fields[k] then return nil end
  if reductions[k] then
    ferr("%s is a reduction: a fused function is elementwise (reduce its result outside, or use cuda.reduce)",
      tostring(k))
  end
  ferr("a traced value has no field or method '%s': a fused function uses arithmetic operators and " ..
    "cuda.fusion's functions on elements", tostring(k))
end
Value.__tostring = function(v) return 'fused value ' .. v.code .. ' (' .. (v.dtype or v.weak) .. ')' end

---------------------------------------------------------------------------
-- cuda.fuse
---------------------------------------------------------------------------
local Fused = {}
Fused.__index = Fused

-- fuse(fn[, {kernel_name = 'name'}])
function M.fuse(fn, opts)
  if type(fn) ~= 'function' then
    args_layer.fail(string.format('cuda.fuse: expected a function (got %s)', type(fn)), 2)
  end
  opts = args_layer.options('cuda.fuse', opts, FUSE_OPTIONS)
  local name = opts.kernel_name or 'fused_kernel'
  if type(name) ~= 'string' or not name:match('^[%a_][%w_]*$') then
    args_layer.fail(string.format('cuda.fuse: kernel_name must be an identifier (got %s)', tostring(name)), 2)
  end
  return setmetatable({ fn = fn, name = name, kernels = {} }, Fused)
end

-- The signature of a call's arguments (the cache key) and their kinds.
local function signature(self, args, n)
  local parts = {}
  for k = 1, n do
    local a = args[k]
    if T.is_tensor(a) then parts[k] = a.dtype
    elseif type(a) == 'number' then parts[k] = 's' .. number_kind(a)
    elseif type(a) == 'boolean' then parts[k] = 'sbool'
    else
      local what = type(a)
      if type(a) == 'table' and a._is_variable == true then what = 'a Variable (pass its .array)' end
      args_layer.fail(string.format('fuse %s: argument %d must be a tensor, a number or a boolean (got %s)',
        self.name, k, what), 3)
    end
  end
  return table.concat(parts, ',')
end

-- Runs the Lua function on symbolic operands; returns the elementwise kernel.
local function trace(self, args, n)
  local t = { name = self.name, n = 0, lines = {} }
  local inputs, params = {}, {}
  for k = 1, n do
    local a = args[k]
    local v = { trace = t, code = 'in' .. k }
    if T.is_tensor(a) then v.dtype = a.dtype
    elseif type(a) == 'boolean' then v.weak = 'bool'
    else v.weak = number_kind(a) end
    inputs[k] = setmetatable(v, Value)
    params[k] = (v.dtype or weak_ctype[v.weak]) .. ' in' .. k
  end
  local saved = tracing
  tracing = t
  t.in_body = true
  local res = { pcall(self.fn, unpack(inputs, 1, n)) }
  t.in_body = false
  tracing = saved
  if not res[1] then
    local msg = tostring(res[2])
    local own = msg:find(FUSE_ERROR, 1, true)
    if own then error(msg:sub(1, own - 1) .. msg:sub(own + #FUSE_ERROR), 0) end
    -- Lua compares a table with a number without asking the metatable
    if msg:find('attempt to compare', 1, true) then
      args_layer.fail(string.format('fuse %s: comparing a traced value with <, <=, > or >= cannot be fused (%s): ' ..
        'a branch on it would be fixed at trace time for every element; use cuda.fusion.less/greater and ' ..
        'cuda.fusion.where', self.name, msg), 3)
    end
    args_layer.fail(string.format("fuse %s: the function failed while being traced with symbolic operands: %s " ..
      "(a fused function may use arithmetic operators and cuda.fusion's functions only, not math.* or " ..
      "tensor ops)", self.name, msg), 3)
  end
  if #res < 2 then args_layer.fail(string.format('fuse %s: the function returned nothing', self.name), 3) end
  local outs, lines = {}, t.lines
  local saved2 = tracing
  tracing = t
  for j = 2, #res do
    local r = res[j]
    if not is_value(r) and type(r) ~= 'number' and type(r) ~= 'boolean' then
      tracing = saved2
      args_layer.fail(string.format('fuse %s: return value %d must be a traced value or a number (got %s)',
        self.name, j - 1, T.is_tensor(r) and 'a tensor' or type(r)), 3)
    end
    local v = operand(r, 'return', j - 1)
    local dt = v.dtype or weak_ctype[v.weak]
    outs[#outs + 1] = dt .. ' out' .. (j - 1)
    lines[#lines + 1] = string.format('  out%d = %s;', j - 1, v.code)
  end
  tracing = saved2
  return K.elementwise(table.concat(params, ', '), table.concat(outs, ', '), table.concat(lines, '\n'), self.name)
end

function Fused:kernel_for(...)
  local n = select('#', ...)
  local args = { ... }
  local has_tensor = false
  for k = 1, n do if T.is_tensor(args[k]) then has_tensor = true end end
  local key = signature(self, args, n)
  if not has_tensor then
    args_layer.fail(string.format('fuse %s: needs at least one tensor argument (it gives the shape)', self.name), 3)
  end
  local k = self.kernels[key]
  if not k then
    k = trace(self, args, n)
    self.kernels[key] = k
  end
  return k, args, n
end

function Fused:__call(...)
  local k, args, n = self:kernel_for(...)
  return k(unpack(args, 1, n))
end

-- The elementwise body the trace for these arguments gives (for inspection).
function Fused:body(...)
  return (self:kernel_for(...)).body
end

function Fused:__tostring() return 'fused function ' .. self.name end

return M

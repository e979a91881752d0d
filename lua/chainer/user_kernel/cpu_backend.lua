-- chainer.user_kernel.cpu_backend: runs user-defined kernels on the CPU by
-- translating their C-like bodies (parsed by parse.lua) into Lua source
-- over FFI pointers, compiled once with `load` and cached by body, types
-- and loop rank.  The loops are plain Lua loops, so LuaJIT compiles them.
--
-- C semantics kept: integer division and % truncate toward zero; casts and
-- stores to integer types truncate; comparisons and logical operators give
-- bool; conditions test != 0.  Not kept (documented in docs/cuda.md):
-- float32 arithmetic is evaluated in double precision and rounded when
-- stored; integer arithmetic does not wrap on overflow; bitwise operators
-- work on 32-bit values (LuaJIT's bit library).
local ffi = require 'ffi'
local bit = require 'bit'
local P = require 'chainer.user_kernel.parse'

local M = {}

local C = require('chainer._libc').C   -- libm: erf, lgamma, ... for the generated code

-- Helpers the generated code reaches through its upvalue `H`.
local H = {}
function H.trunc(x) if x >= 0 then return math.floor(x) end return math.ceil(x) end
function H.idiv(a, b)
  local q = a / b
  if q >= 0 then return math.floor(q) end
  return math.ceil(q)
end
M.helpers = H

local ctypes = { bool = 'uint8_t', int8 = 'int8_t', uint8 = 'uint8_t', int16 = 'int16_t', int32 = 'int32_t',
  int64 = 'int64_t', float32 = 'float', float64 = 'double', uint16 = 'uint16_t', uint32 = 'uint32_t',
  uint64 = 'uint64_t' }
M.ctypes = ctypes

local function is_float(t) return t == 'float32' or t == 'float64' or t == 'float16' end
local function is_int(t) return t ~= 'bool' and not is_float(t) end
local function is64(t) return t == 'int64' or t == 'uint64' end

-- C's usual arithmetic conversions, simplified to the types kernels use.
local function arith(a, b)
  if a == 'float64' or b == 'float64' then return 'float64' end
  if is_float(a) or is_float(b) then return 'float32' end
  if is64(a) or is64(b) then return (a == 'uint64' or b == 'uint64') and 'uint64' or 'int64' end
  return 'int32'
end

local function num(code, t) if t == 'bool' then return '(' .. code .. ' and 1 or 0)' end return code end
local function cond(code, t) if t == 'bool' then return code end return '(' .. code .. ' ~= 0)' end

-- Converts a value of type `from` (as Lua code) to type `to`.
local function conv(code, from, to)
  if from == to then return code end
  if to == 'bool' then return cond(code, from) end
  if from == 'bool' then return '(' .. code .. ' and 1 or 0)' end
  if is_int(to) and is_float(from) then return 'trunc(' .. code .. ')' end
  return code
end
M.conv = conv

-- Math functions: Lua implementation and result type.  'f' results follow
-- the first argument (float32 stays float32, anything else gives float64),
-- 'f32' are the float-suffixed C names, 'a' the arithmetic type of all
-- arguments (min, max, abs), 'b' bool.
local funcs = {
  exp = { 'exp', 1, 'f' }, log = { 'log', 1, 'f' }, sqrt = { 'sqrt', 1, 'f' }, sin = { 'sin', 1, 'f' },
  cos = { 'cos', 1, 'f' }, tan = { 'tan', 1, 'f' }, asin = { 'asin', 1, 'f' }, acos = { 'acos', 1, 'f' },
  atan = { 'atan', 1, 'f' }, sinh = { 'sinh', 1, 'f' }, cosh = { 'cosh', 1, 'f' }, tanh = { 'tanh', 1, 'f' },
  atan2 = { 'atan2', 2, 'f' }, pow = { 'pow', 2, 'f' }, floor = { 'floor', 1, 'f' }, ceil = { 'ceil', 1, 'f' },
  fabs = { 'fabs', 1, 'f' }, fmod = { 'fmod', 2, 'f' }, log10 = { 'log10', 1, 'f' }, exp2 = { 'exp2', 1, 'f' },
  log2 = { 'C.log2', 1, 'f' }, log1p = { 'C.log1p', 1, 'f' }, expm1 = { 'C.expm1', 1, 'f' },
  erf = { 'C.erf', 1, 'f' }, erfc = { 'C.erfc', 1, 'f' }, lgamma = { 'C.lgamma', 1, 'f' },
  tgamma = { 'C.tgamma', 1, 'f' }, cbrt = { 'C.cbrt', 1, 'f' }, hypot = { 'C.hypot', 2, 'f' },
  round = { 'C.round', 1, 'f' }, trunc = { 'C.trunc', 1, 'f' }, rint = { 'C.rint', 1, 'f' },
  nearbyint = { 'C.rint', 1, 'f' }, copysign = { 'C.copysign', 2, 'f' }, fmin = { 'C.fmin', 2, 'f' },
  fmax = { 'C.fmax', 2, 'f' }, rsqrt = { 'rsqrt', 1, 'f' },
  min = { 'min', 2, 'a' }, max = { 'max', 2, 'a' }, abs = { 'abs', 1, 'a' },
  isnan = { 'isnan', 1, 'b' }, isinf = { 'isinf', 1, 'b' }, isfinite = { 'isfinite', 1, 'b' },
  signbit = { 'signbit', 1, 'b' },
}
for _, f in ipairs { 'exp', 'log', 'sqrt', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'tanh',
  'atan2', 'pow', 'floor', 'ceil', 'fabs', 'fmod', 'log10', 'exp2', 'log2', 'log1p', 'expm1', 'erf', 'erfc',
  'lgamma', 'tgamma', 'cbrt', 'hypot', 'round', 'trunc', 'rint', 'nearbyint', 'copysign', 'fmin', 'fmax',
  'rsqrt' } do
  funcs[f .. 'f'] = { funcs[f][1], funcs[f][2], 'f32' }
end
M.funcs = funcs

-- The prologue every generated chunk shares.
local prologue = [[
local ffi, bit, C, H = ...
local floor, ceil, sqrt, exp, log, log10 = math.floor, math.ceil, math.sqrt, math.exp, math.log, math.log10
local sin, cos, tan, asin, acos, atan, atan2 = math.sin, math.cos, math.tan, math.asin, math.acos, math.atan, math.atan2
local sinh, cosh, tanh, pow, fabs, fmod = math.sinh, math.cosh, math.tanh, math.pow, math.abs, math.fmod
local abs, huge, tonumber = math.abs, math.huge, tonumber
local trunc, idiv = H.trunc, H.idiv
local band, bor, bxor, bnot, lshift, arshift = bit.band, bit.bor, bit.bxor, bit.bnot, bit.lshift, bit.arshift
local function exp2(x) return 2 ^ x end
local function rsqrt(x) return 1 / sqrt(x) end
local function isnan(x) return x ~= x end
local function isinf(x) return x == huge or x == -huge end
local function isfinite(x) return x == x and x ~= huge and x ~= -huge end
local function signbit(x) return x < 0 or (x == 0 and 1 / x < 0) end
local function fmin2(a, b) return C.fmin(a, b) end
local function fmax2(a, b) return C.fmax(a, b) end
local function min(a, b) if b < a then return b end return a end
local function max(a, b) if b > a then return b end return a end
]]

---------------------------------------------------------------------------
-- the translator
---------------------------------------------------------------------------
local Tr = {}
Tr.__index = Tr

-- `src` is the kernel text the nodes came from (for error context).
local function new_translator(kname, src, what)
  return setmetatable({ kname = kname, src = src, what = what, scopes = { {} }, lines = {}, depth = 1,
    loops = {}, nlabel = 0, ntmp = 0 }, Tr)
end

function Tr:fail(node, fmt, ...)
  local ctx = P.node_context(self.src, node)
  local near = node and node.tok and node.tok.v or ''
  error(string.format("kernel %s: %s in %s, near '%s' (in: %s)", self.kname, string.format(fmt, ...),
    self.what, near, ctx), 0)
end

function Tr:emit(s) self.lines[#self.lines + 1] = string.rep('  ', self.depth) .. s end
function Tr:tmp() self.ntmp = self.ntmp + 1; return '_t' .. self.ntmp end

function Tr:lookup(name)
  for k = #self.scopes, 1, -1 do
    local v = self.scopes[k][name]
    if v then return v end
  end
  return nil
end

function Tr:declare(name, var, node)
  local scope = self.scopes[#self.scopes]
  if scope[name] then self:fail(node, "'%s' is declared twice in the same block", name) end
  if self.scopes[1][name] and self.scopes[1][name].kind ~= 'local' then
    self:fail(node, "local '%s' has the name of a parameter", name)
  end
  scope[name] = var
end

function Tr:push() self.scopes[#self.scopes + 1] = {} end
function Tr:pop() self.scopes[#self.scopes] = nil end

-- Compiles an expression: returns Lua code and its scalar type.
function Tr:ex(e)
  local k = e.k
  if k == 'num' then
    if is_int(e.t) then return string.format('%d', e.v), e.t end
    return string.format('%.17g', e.v), e.t
  elseif k == 'bool' then
    return tostring(e.v), 'bool'
  elseif k == 'name' then
    local v = self:lookup(e.name)
    if not v then self:fail(e, "unknown name '%s'", e.name) end
    if v.kind == 'raw' then self:fail(e, "raw parameter '%s' must be indexed (%s[j])", e.name, e.name) end
    v.read = true
    return v.lua, v.t
  elseif k == 'method' then
    local v = self:lookup(e.name .. '.' .. e.method)
    if not v then
      local base = self:lookup(e.name)
      if base and base.kind == 'raw' then
        self:fail(e, "raw parameters have size() only (got %s.%s())", e.name, e.method)
      end
      self:fail(e, "unknown method %s.%s()", e.name, e.method)
    end
    return v.lua, v.t
  elseif k == 'index' then
    local v = self:lookup(e.name)
    if not v or v.kind ~= 'raw' then
      self:fail(e, "only raw parameters can be indexed ('%s' is %s)", e.name, v and 'not raw' or 'unknown')
    end
    local ic, it = self:ex(e.idx)
    if not is_int(it) then self:fail(e, 'the index of %s must be an integer (got %s)', e.name, it) end
    return self:load(v.lua, v.t, ic), v.t
  elseif k == 'call' then
    return self:call(e)
  elseif k == 'cast' then
    if e.t == 'auto' then self:fail(e, "'auto' is not a type to cast to") end
    local c, t = self:ex(e.a)
    return conv(c, t, e.t), e.t
  elseif k == 'un' then
    local c, t = self:ex(e.a)
    if e.op == '!' then return '(not ' .. cond(c, t) .. ')', 'bool' end
    if e.op == '~' then
      if not is_int(t) and t ~= 'bool' then self:fail(e, '~ needs an integer operand (got %s)', t) end
      return 'bnot(' .. num(c, t) .. ')', arith(t, 'int32')
    end
    local rt = t == 'bool' and 'int32' or t
    if e.op == '-' then return '(-' .. num(c, t) .. ')', rt end
    return num(c, t), rt
  elseif k == 'bin' then
    return self:binop(e)
  elseif k == 'tern' then
    local cc, ct = self:ex(e.c)
    local ac, at = self:ex(e.a)
    local bc, bt = self:ex(e.b)
    if at == 'bool' and bt == 'bool' then
      return '((' .. cond(cc, ct) .. ' and ' .. num(ac, at) .. ' or ' .. num(bc, bt) .. ') ~= 0)', 'bool'
    end
    local rt = arith(at, bt)
    return '(' .. cond(cc, ct) .. ' and ' .. conv(ac, at, rt) .. ' or ' .. conv(bc, bt, rt) .. ')', rt
  elseif k == 'assign' or k == 'preinc' or k == 'postinc' or k == 'comma' then
    self:fail(e, 'assignments and ++/-- inside expressions are not supported by the CPU translator; ' ..
      'write them as statements of their own')
  end
  self:fail(e, 'unsupported expression')
end

local cmp_ops = { ['=='] = '==', ['!='] = '~=', ['<'] = '<', ['>'] = '>', ['<='] = '<=', ['>='] = '>=' }
local bit_ops = { ['&'] = 'band', ['|'] = 'bor', ['^'] = 'bxor', ['<<'] = 'lshift', ['>>'] = 'arshift' }

function Tr:binop(e)
  local op = e.op
  local ac, at = self:ex(e.a)
  local bc, bt = self:ex(e.b)
  if op == '&&' then return '(' .. cond(ac, at) .. ' and ' .. cond(bc, bt) .. ')', 'bool' end
  if op == '||' then return '(' .. cond(ac, at) .. ' or ' .. cond(bc, bt) .. ')', 'bool' end
  if cmp_ops[op] then
    if (op == '==' or op == '~=') and at == 'bool' and bt == 'bool' then
      return '(' .. ac .. ' ' .. cmp_ops[op] .. ' ' .. bc .. ')', 'bool'
    end
    return '(' .. num(ac, at) .. ' ' .. cmp_ops[op] .. ' ' .. num(bc, bt) .. ')', 'bool'
  end
  if bit_ops[op] then
    if is_float(at) or is_float(bt) then
      self:fail(e, "operator %s needs integer operands (got %s and %s)", op, at, bt)
    end
    local rt = (op == '<<' or op == '>>') and arith(at, 'int32') or arith(at, bt)
    return bit_ops[op] .. '(' .. num(ac, at) .. ', ' .. num(bc, bt) .. ')', rt
  end
  local rt = arith(at, bt)
  local a, b = num(ac, at), num(bc, bt)
  if op == '/' and is_int(rt) then return 'idiv(' .. a .. ', ' .. b .. ')', rt end
  if op == '%' then
    if is_float(rt) then self:fail(e, 'operator %% needs integer operands (got %s and %s; use fmod)', at, bt) end
    return 'fmod(' .. a .. ', ' .. b .. ')', rt
  end
  return '(' .. a .. ' ' .. op .. ' ' .. b .. ')', rt
end

function Tr:call(e)
  local f = funcs[e.f]
  if not f then self:fail(e, "unknown function '%s'", e.f) end
  if #e.args ~= f[2] then
    self:fail(e, '%s takes %d argument%s (got %d)', e.f, f[2], f[2] == 1 and '' or 's', #e.args)
  end
  local codes, types = {}, {}
  for j, a in ipairs(e.args) do codes[j], types[j] = self:ex(a) end
  local kind, rt = f[3], nil
  if kind == 'f' then
    rt = types[1] == 'float32' and 'float32' or 'float64'
    if f[2] == 2 then rt = (types[1] == 'float32' and types[2] == 'float32') and 'float32' or 'float64' end
  elseif kind == 'f32' then
    rt = 'float32'
  elseif kind == 'b' then
    rt = 'bool'
  else
    rt = types[1] == 'bool' and 'int32' or types[1]
    if f[2] == 2 then rt = arith(types[1], types[2]) end
  end
  local name = f[1]
  -- CUDA's float min/max ignore a NaN operand (fminf/fmaxf)
  if (name == 'min' or name == 'max') and is_float(rt) then name = name == 'min' and 'fmin2' or 'fmax2' end
  local args = {}
  for j = 1, #codes do
    args[j] = kind == 'a' and conv(codes[j], types[j], rt) or num(codes[j], types[j])
  end
  return name .. '(' .. table.concat(args, ', ') .. ')', rt
end

-- Reads element `idx` of pointer `p` holding scalar type t.
function Tr:load(p, t, idx)
  local r = p .. '[' .. idx .. ']'
  if t == 'bool' then return '(' .. r .. ' ~= 0)' end
  if is64(t) then return 'tonumber(' .. r .. ')' end
  return r
end

-- Code that turns a value of scalar type t into what an FFI store takes.
local function store_value(code, t)
  if t == 'bool' then return '(' .. code .. ' and 1 or 0)' end
  return code
end
M.store_value = store_value

function Tr:assign_to(lhs, code, t, node)
  if lhs.k == 'name' then
    local v = self:lookup(lhs.name)
    if not v then self:fail(lhs, "unknown name '%s'", lhs.name) end
    if v.kind == 'input' or v.kind == 'scalar' or v.kind == 'special' or v.const then
      self:fail(node, "cannot assign to '%s' (%s)", lhs.name, v.kind == 'local' and 'declared const' or
        v.kind == 'special' and 'a kernel variable' or 'an input parameter')
    end
    if v.kind == 'raw' then self:fail(node, "raw parameter '%s' must be indexed (%s[j])", lhs.name, lhs.name) end
    v.written = true
    self:emit(v.lua .. ' = ' .. conv(code, t, v.t))
  elseif lhs.k == 'index' then
    local v = self:lookup(lhs.name)
    if not v or v.kind ~= 'raw' then self:fail(lhs, "only raw parameters can be indexed ('%s')", lhs.name) end
    if v.input then self:fail(node, "cannot assign to '%s' (an input parameter)", lhs.name) end
    local ic, it = self:ex(lhs.idx)
    if not is_int(it) then self:fail(lhs, 'the index of %s must be an integer (got %s)', lhs.name, it) end
    self:emit(v.lua .. '[' .. ic .. '] = ' .. store_value(conv(code, t, v.t), v.t))
  else
    self:fail(node, 'the left side of an assignment must be a variable or raw[j]')
  end
end

function Tr:assignment(e)
  local rhs = e.rhs
  if rhs.k == 'assign' and not rhs.paren then
    -- a = b = c: assign b first, then a from b
    self:assignment(rhs)
    rhs = rhs.lhs
  end
  local lhs = e.lhs
  if e.op == '=' then
    local c, t = self:ex(rhs)
    return self:assign_to(lhs, c, t, e)
  end
  -- compound: a op= b is a = a op b (a raw index is evaluated once)
  local op = e.op:sub(1, -2)
  if lhs.k == 'index' then
    local v = self:lookup(lhs.name)
    if v and v.kind == 'raw' then
      local ic, it = self:ex(lhs.idx)
      local tmp = self:tmp()
      self:emit('local ' .. tmp .. ' = ' .. ic)
      local tv = { kind = 'local', lua = tmp, t = it }
      self.scopes[#self.scopes]['\0' .. tmp] = tv
      local idx_node = { k = 'name', name = '\0' .. tmp, tok = lhs.tok }
      lhs = { k = 'index', name = lhs.name, idx = idx_node, tok = lhs.tok }
    end
  end
  local c, t = self:ex({ k = 'bin', op = op, a = lhs, b = rhs, tok = e.tok })
  return self:assign_to(lhs, c, t, e)
end

function Tr:stmt(s)
  local k = s.k
  if k == 'block' then
    self:emit('do')
    self.depth = self.depth + 1
    self:push()
    for _, st in ipairs(s.list) do self:stmt(st) end
    self:pop()
    self.depth = self.depth - 1
    self:emit('end')
  elseif k == 'empty' then
    return
  elseif k == 'decl' then
    for _, it in ipairs(s.items) do
      local c, t
      if it.init then c, t = self:ex(it.init) end
      local vt = s.t
      if vt == 'auto' then
        if not it.init then self:fail(s, "'auto %s' needs an initial value", it.name) end
        vt = t
      end
      local lua = 'L_' .. it.name
      local code = it.init and conv(c, t, vt) or (vt == 'bool' and 'false' or '0')
      self:emit('local ' .. lua .. ' = ' .. code)
      self:declare(it.name, { kind = 'local', lua = lua, t = vt }, s)
    end
  elseif k == 'expr' then
    local e = s.e
    if e.k == 'assign' then
      self:assignment(e)
    elseif e.k == 'preinc' or e.k == 'postinc' then
      self:assignment({ k = 'assign', op = e.op == '++' and '+=' or '-=', lhs = e.a,
        rhs = { k = 'num', v = 1, t = 'int32', tok = e.tok }, tok = e.tok })
    elseif e.k == 'comma' then
      for _, x in ipairs(e.list) do self:stmt({ k = 'expr', e = x, tok = s.tok }) end
    else
      self:fail(s, 'this statement has no effect (expected an assignment, ++ or --)')
    end
  elseif k == 'if' then
    local c, t = self:ex(s.c)
    self:emit('if ' .. cond(c, t) .. ' then')
    self:sub(s.a)
    if s.b then
      self:emit('else')
      self:sub(s.b)
    end
    self:emit('end')
  elseif k == 'for' or k == 'while' then
    self:emit('do')
    self.depth = self.depth + 1
    self:push()
    if s.init then self:stmt(s.init) end
    local c = 'true'
    local cexpr = k == 'for' and s.cond or s.c
    if cexpr then
      local cc, ct = self:ex(cexpr)
      c = cond(cc, ct)
    end
    local label = self:loop_label()
    self:emit('while ' .. c .. ' do')
    self:loop_body(s.body, label)
    if s.step then self:stmt(s.step) end
    self.depth = self.depth - 1
    self:emit('end')
    self.loops[#self.loops] = nil
    self:pop()
    self.depth = self.depth - 1
    self:emit('end')
  elseif k == 'dowhile' then
    local label = self:loop_label()
    self:emit('repeat')
    self:loop_body(s.body, label)
    local cc, ct = self:ex(s.c)
    self.depth = self.depth - 1
    self:emit('until not ' .. cond(cc, ct))
    self.loops[#self.loops] = nil
  elseif k == 'break' then
    if #self.loops == 0 then self:fail(s, "'break' outside a loop") end
    self:emit('break')
  elseif k == 'continue' then
    if #self.loops == 0 then self:fail(s, "'continue' outside a loop") end
    local l = self.loops[#self.loops]
    l.used = true
    self:emit('goto ' .. l.name)
  else
    self:fail(s, 'unsupported statement')
  end
end

function Tr:loop_label()
  self.nlabel = self.nlabel + 1
  local l = { name = 'continue_' .. self.nlabel }
  self.loops[#self.loops + 1] = l
  return l
end

-- The body of a loop in its own block, then the continue label.
function Tr:loop_body(body, label)
  self.depth = self.depth + 1
  self:emit('do')
  self:sub(body)
  self:emit('end')
  self:emit('::' .. label.name .. '::')
end

-- A nested statement in its own scope.
function Tr:sub(s)
  self.depth = self.depth + 1
  self:push()
  if s.k == 'block' then
    for _, st in ipairs(s.list) do self:stmt(st) end
  else
    self:stmt(s)
  end
  self:pop()
  self.depth = self.depth - 1
end

M.new_translator = new_translator

---------------------------------------------------------------------------
-- loop skeletons
---------------------------------------------------------------------------
-- Emits nested loops over `nd` dimensions (names D<d>) keeping an element
-- offset per array: offsets o<k> for the arrays in `arrays` (their strides
-- are S<k>_<d>).  Returns the closing lines to emit after the body.
local function open_loops(L, nd, arrays, dimname, stridename, base)
  local closers = {}
  for d = 1, nd do
    local ind = string.rep('  ', d)
    L[#L + 1] = string.format('%sfor a%s%d = 0, %s%d - 1 do', ind, dimname, d, dimname, d)
    for _, k in ipairs(arrays) do
      local prev = d == 1 and base(k) or string.format('o%d_%s%d', k, dimname, d - 1)
      L[#L + 1] = string.format('%s  local o%d_%s%d = %s + a%s%d * %s%d_%d', ind, k, dimname, d, prev, dimname, d,
        stridename, k, d)
    end
    table.insert(closers, 1, ind .. 'end')
  end
  return closers
end

local function final_offset(k, nd, dimname, base)
  if nd == 0 then return base(k) end
  return string.format('o%d_%s%d', k, dimname, nd)
end

-- Binds the parameters in the translator's outermost scope: inputs
-- (locals read per element), outputs (locals stored per element), scalars
-- (locals set once), raw arrays (pointers).  Returns the per-element
-- prologue/epilogue generators.
local function bind_params(tr, params, kinds, types)
  local scope = tr.scopes[1]
  for k, prm in ipairs(params) do
    local t = types[k]
    local v
    if prm.raw then
      v = { kind = 'raw', lua = 'p' .. k, t = t, input = prm.is_input }
      scope[prm.name .. '.size'] = { kind = 'special', lua = 'n' .. k, t = 'int64' }
    elseif kinds[k] == 'scalar' then
      v = { kind = 'scalar', lua = 'v' .. k, t = t }
    else
      v = { kind = prm.is_input and 'input' or 'output', lua = 'v' .. k, t = t }
    end
    scope[prm.name] = v
  end
end

local function chunk_source(body_lines)
  return prologue .. table.concat(body_lines, '\n') .. '\n'
end

local function compile(src, kname)
  local fn, err = load(src, '=kernel ' .. kname)
  if not fn then error(string.format('kernel %s: internal error compiling the CPU translation: %s', kname, err)) end
  return fn(ffi, bit, C, H)
end

-- Header lines unpacking the arguments of a generated function.
local function unpack_args(L, params, kinds, types, nd_lists)
  for k, prm in ipairs(params) do
    if kinds[k] == 'scalar' then
      L[#L + 1] = string.format('  local v%d = %s', k, types[k] == 'bool' and string.format('V[%d] ~= 0', k) or
        string.format('V[%d]', k))
    else
      L[#L + 1] = string.format('  local p%d = P[%d]', k, k)
      if prm.raw then L[#L + 1] = string.format('  local n%d = Z[%d]', k, k) end
    end
  end
  for _, spec in ipairs(nd_lists) do
    local nd, dimname, stridename, stridetab = spec[1], spec[2], spec[3], spec[4]
    for d = 1, nd do
      L[#L + 1] = string.format('  local %s%d = %s[%d]', dimname, d, spec[5], d)
      for k, prm in ipairs(params) do
        if kinds[k] == 'array' and not prm.raw then
          L[#L + 1] = string.format('  local %s%d_%d = %s[%d][%d]', stridename, k, d, stridetab, k, d)
        end
      end
    end
  end
end

local function element_arrays(params, kinds)
  local list = {}
  for k, prm in ipairs(params) do
    if kinds[k] == 'array' and not prm.raw then list[#list + 1] = k end
  end
  return list
end

-- Builds (and returns the source of) the CPU function of an elementwise
-- kernel.  `params` are in_params then out_params (each with is_input),
-- `kinds[k]` is 'array' or 'scalar', `types[k]` the bound scalar type, `nd`
-- the loop rank.  The function is f(n, D, P, S, Z, V).
function M.elementwise_source(kname, body_ast, params, kinds, types, nd)
  local tr = new_translator(kname, body_ast.src, 'the kernel body')
  bind_params(tr, params, kinds, types)
  tr.scopes[1]['i'] = { kind = 'special', lua = 'i', t = 'int64' }
  tr.scopes[1]['_ind.size'] = { kind = 'special', lua = 'n', t = 'int64' }
  tr.scopes[1]['_ind.get'] = { kind = 'special', lua = 'i', t = 'int64' }
  tr.depth = nd + 2
  tr:push()
  for _, st in ipairs(body_ast.list) do tr:stmt(st) end
  tr:pop()

  local L = { 'return function(n, D, P, S, Z, V)' }
  unpack_args(L, params, kinds, types, { { nd, 'D', 'S', 'S', 'D' } })
  local arrays = element_arrays(params, kinds)
  L[#L + 1] = '  local i = 0'
  local closers = open_loops(L, nd, arrays, 'D', 'S', function() return '0' end)
  local ind = string.rep('  ', nd + 2)
  -- per element: load inputs, load outputs the body reads, run, store outputs
  for _, k in ipairs(arrays) do
    local prm, v = params[k], tr.scopes[1][params[k].name]
    local off = final_offset(k, nd, 'D', function() return '0' end)
    if prm.is_input then
      if v.read then L[#L + 1] = ind .. string.format('local v%d = %s', k, tr:load('p' .. k, types[k], off)) end
    else
      local init = v.read and tr:load('p' .. k, types[k], off) or (types[k] == 'bool' and 'false' or '0')
      L[#L + 1] = ind .. string.format('local v%d = %s', k, init)
    end
  end
  for _, line in ipairs(tr.lines) do L[#L + 1] = line end
  for _, k in ipairs(arrays) do
    local prm, v = params[k], tr.scopes[1][params[k].name]
    if not prm.is_input and v.written then
      local off = final_offset(k, nd, 'D', function() return '0' end)
      L[#L + 1] = ind .. string.format('p%d[%s] = %s', k, off, store_value('v' .. k, types[k]))
    end
  end
  L[#L + 1] = ind .. 'i = i + 1'
  for _, c in ipairs(closers) do L[#L + 1] = c end
  L[#L + 1] = 'end'
  return chunk_source(L)
end

-- Reduction: f(nout, nin, DO, DI, P, SO, SI, Z, V).  Inputs are read in the
-- inner loops (over the reduced axes), outputs are stored in the outer ones.
-- `rtype` is the reduction type (the type of a and b); identity may be nil
-- (the first mapped value starts each reduction).
function M.reduce_source(kname, asts, params, kinds, types, nd_out, nd_in, rtype)
  local scope_setup = function(tr)
    bind_params(tr, params, kinds, types)
    tr.scopes[1]['_in_ind.size'] = { kind = 'special', lua = 'nin', t = 'int64' }
    tr.scopes[1]['_out_ind.size'] = { kind = 'special', lua = 'nout', t = 'int64' }
  end
  local tr_map = new_translator(kname, asts.map.src, 'map_expr')
  scope_setup(tr_map)
  local map_code, map_t = tr_map:ex(asts.map)

  local tr_red = new_translator(kname, asts.reduce.src, 'reduce_expr')
  scope_setup(tr_red)
  tr_red.scopes[1]['a'] = { kind = 'special', lua = 'ra', t = rtype }
  tr_red.scopes[1]['b'] = { kind = 'special', lua = 'rb', t = rtype }
  local red_code, red_t = tr_red:ex(asts.reduce)

  local id_code
  if asts.identity then
    local tr_id = new_translator(kname, asts.identity.src, 'identity')
    local c, t = tr_id:ex(asts.identity)
    id_code = conv(c, t, rtype)
  end

  local tr_post = new_translator(kname, asts.post.src, 'post_map_expr')
  scope_setup(tr_post)
  tr_post.scopes[1]['a'] = { kind = 'special', lua = 'ra', t = rtype }
  tr_post.depth = nd_out + 2
  tr_post:push()
  for _, st in ipairs(asts.post.list) do tr_post:stmt(st) end
  tr_post:pop()
  -- the map expression must not touch outputs, the post-map must not read inputs
  for k, prm in ipairs(params) do
    if prm.is_input and tr_post.scopes[1][prm.name].read then
      error(string.format("kernel %s: post_map_expr cannot read the input '%s' (it sees the reduced value 'a' " ..
        "and the outputs)", kname, prm.name), 0)
    end
    if not prm.is_input and tr_map.scopes[1][prm.name].read then
      error(string.format("kernel %s: map_expr cannot read the output '%s'", kname, prm.name), 0)
    end
  end

  local L = { 'return function(nout, nin, DO, DI, P, SO, SI, Z, V)' }
  unpack_args(L, params, kinds, types, { { nd_out, 'O', 'SO', 'SO', 'DO' }, { nd_in, 'I', 'SI', 'SI', 'DI' } })
  local arrays = element_arrays(params, kinds)
  local ins, outs = {}, {}
  for _, k in ipairs(arrays) do
    if params[k].is_input then ins[#ins + 1] = k else outs[#outs + 1] = k end
  end
  local zero = function() return '0' end
  local closers = open_loops(L, nd_out, arrays, 'O', 'SO', zero)
  local ind = string.rep('  ', nd_out + 2)
  L[#L + 1] = ind .. 'local ra = ' .. (id_code or (rtype == 'bool' and 'false' or '0'))
  if not id_code then L[#L + 1] = ind .. 'local first = true' end
  -- the inner loops start at the outer offsets of the inputs
  local inner_lines = {}
  local obase = function(k) return final_offset(k, nd_out, 'O', zero) end
  local iclosers = open_loops(inner_lines, nd_in, ins, 'I', 'SI', obase)
  for _, line in ipairs(inner_lines) do L[#L + 1] = string.rep('  ', nd_out) .. line end
  local iind = string.rep('  ', nd_out + nd_in + 2)
  for _, k in ipairs(ins) do
    if tr_map.scopes[1][params[k].name].read then
      local off = nd_in == 0 and obase(k) or string.format('o%d_I%d', k, nd_in)
      L[#L + 1] = iind .. string.format('local v%d = %s', k, tr_map:load('p' .. k, types[k], off))
    end
  end
  L[#L + 1] = iind .. 'local rb = ' .. conv(map_code, map_t, rtype)
  if id_code then
    L[#L + 1] = iind .. 'ra = ' .. conv(red_code, red_t, rtype)
  else
    L[#L + 1] = iind .. 'if first then ra = rb; first = false else ra = ' .. conv(red_code, red_t, rtype) .. ' end'
  end
  for _, c in ipairs(iclosers) do L[#L + 1] = string.rep('  ', nd_out) .. c end
  if not id_code then
    L[#L + 1] = ind .. 'if first then error("kernel ' .. kname ..
      ': zero-size reduction without an identity", 0) end'
  end
  for _, k in ipairs(outs) do
    local v = tr_post.scopes[1][params[k].name]
    local init = v.read and tr_post:load('p' .. k, types[k], obase(k)) or (types[k] == 'bool' and 'false' or '0')
    L[#L + 1] = ind .. string.format('local v%d = %s', k, init)
  end
  for _, line in ipairs(tr_post.lines) do L[#L + 1] = line end
  for _, k in ipairs(outs) do
    if tr_post.scopes[1][params[k].name].written then
      L[#L + 1] = ind .. string.format('p%d[%s] = %s', k, obase(k), store_value('v' .. k, types[k]))
    end
  end
  for _, c in ipairs(closers) do L[#L + 1] = c end
  L[#L + 1] = 'end'
  return chunk_source(L)
end

M.compile = compile
return M

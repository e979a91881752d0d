-- functions/math/basic_math.lua: the arithmetic operators of Variables
-- (+ - * / ^ % and unary minus) and F.add/sub/mul/div/pow/neg/mod/absolute.
--
-- Operands may be Variables, tensors or Lua numbers, on either side.  Two
-- array operands broadcast (their gradients are summed back with sum_to)
-- and must share a dtype, as in Chainer; a number is a weak scalar (a
-- float32 Variable times 2.5 stays float32).
--
-- When applying a node would leave no trace (FunctionNode.can_skip_node:
-- no input requires a gradient or backprop is off, as during a plain
-- backward pass, and no hook or debug check is active), the wrappers call
-- the tensor kernel directly and wrap the result: the FunctionNode
-- machinery is skipped entirely.  The nodes give backprop a
-- backward_tensors (see function_node.lua) next to their backward.
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local FunctionNode = require 'chainer.function_node'

local new_var = Variable.new_var
local is_tensor = T.is_tensor
local T_add, T_sub, T_mul, T_div, T_pow, T_neg = T.add, T.sub, T.mul, T.div, T.pow, T.neg
local T_mod, T_floor, T_log, T_sign = T.mod, T.floor, T.log, T.sign
local T_sum_to = T.sum_to
local T_addmul = T.addmul
local setmetatable, type, error = setmetatable, type, error
local mlog = math.log

local M = {}

-- sum_to and log are needed by the backward passes; loaded lazily because
-- they require this module's siblings.
local sum_to_fn, log_fn
local function sum_to(x, shape)
  sum_to_fn = sum_to_fn or require('chainer.functions.math.sum_to').sum_to
  return sum_to_fn(x, shape)
end
local function log(x)
  log_fn = log_fn or require('chainer.functions.math.log').log
  return log_fn(x)
end

---------------------------------------------------------------------------
-- helpers
---------------------------------------------------------------------------
local function operand_error(fn, pos, x)
  local what = type(x)
  if what == 'table' and x._is_variable then what = 'a Variable without data (an uninitialised Parameter)' end
  error(string.format('%s: operand %d must be a Variable, a tensor or a number (got %s)', fn, pos, what), 3)
end

-- Written without a loop for up to 2 dimensions: a loop here would be
-- unrolled into every trace through an operator and exhaust LuaJIT's
-- loop-unroll budget.
local function same_shape(a, b)
  local pa, pb = a.ptr, b.ptr
  local n = pa.nd
  if n ~= pb.nd then return false end
  if n == 0 then return true end
  if pa.dim[0] ~= pb.dim[0] then return false end
  if n == 1 then return true end
  if pa.dim[1] ~= pb.dim[1] then return false end
  for i = 2, n - 1 do
    if pa.dim[i] ~= pb.dim[i] then return false end
  end
  return true
end
M.same_shape = same_shape

local function check_dtypes(fn, a, b)
  if a.ptr.dt ~= b.ptr.dt then
    error(string.format('%s: the operands have different dtypes (%s and %s); cast one with astype first',
      fn, T.dtype_names[a.ptr.dt], T.dtype_names[b.ptr.dt]), 3)
  end
end

local plain = FunctionNode.can_skip_node

-- Whether input i (of a two-input node) is among the targets; no loop.
local function wants(idx, i)
  return idx[2] ~= nil or idx[1] == i
end

---------------------------------------------------------------------------
-- FunctionNodes
---------------------------------------------------------------------------
-- Binary nodes remember the input shapes only when broadcasting happened.
local function note_broadcast(self, a, b, y)
  if not same_shape(a, y) then self._sa = a.shape end
  if not same_shape(b, y) then self._sb = b.shape end
end

-- A gradient summed back to its input's shape when that input was broadcast
-- (shape: the node's _sa or _sb, false otherwise).
local function unbroadcast(g, shape)
  if shape then return sum_to(g, shape) end
  return g
end
-- The same for backward_tensors (a tensor gradient).
local function unbroadcast_tensor(g, shape)
  if shape then return T_sum_to(g, shape) end
  return g
end

-- retention index tables are constants (never modified)
local R1, R12 = { 1 }, { 1, 2 }
-- The gradient of -x and of c - x: -gy (in gy's place when it is ours alone).
local function negated_backward(self, idx, gys) return { M.neg(gys[1]) } end
local function negated_backward_tensors(self, idx, gys, gxs, own)
  local gy = gys[1]
  gxs[1] = T_neg(gy, own and gy or nil)
end
local function forward_from1(self, inputs) return { self:forward1(inputs[1]) } end
-- forward2 of the nodes of two operands that broadcast (Add, Sub, Mul, Div)
local function broadcasting_forward(name, kernel)
  return function(self, a, b)
    check_dtypes(name, a, b)
    local y = kernel(a, b)
    note_broadcast(self, a, b, y)
    return y
  end
end
local function forward_from2(self, inputs) return { self:forward2(inputs[1], inputs[2]) } end

local Add = FunctionNode:extend('Add')
M.Add = Add
function Add:label() return '_ + _' end
Add.forward2 = broadcasting_forward('add', T_add)
Add.forward = forward_from2
function Add:backward(idx, gys)
  local gy = gys[1]
  return { unbroadcast(gy, self._sa), unbroadcast(gy, self._sb) }
end
-- gy is passed on as it is (the traversal decides which input may own it
-- when it goes to both); sum_to makes a new tensor.
function Add:backward_tensors(idx, gys, gxs)
  local gy = gys[1]
  if wants(idx, 1) then gxs[1] = unbroadcast_tensor(gy, self._sa) end
  if wants(idx, 2) then gxs[2] = unbroadcast_tensor(gy, self._sb) end
end

local AddConstant = FunctionNode:extend('AddConstant')
M.AddConstant = AddConstant
function AddConstant:label() return '_ + const' end
function AddConstant:forward1(x) return T_add(x, self.value) end
AddConstant.forward = forward_from1
function AddConstant:backward(idx, gys) return { gys[1] } end
function AddConstant:backward_tensors(idx, gys, gxs) gxs[1] = gys[1] end

local Sub = FunctionNode:extend('Sub')
M.Sub = Sub
function Sub:label() return '_ - _' end
Sub.forward2 = broadcasting_forward('sub', T_sub)
Sub.forward = forward_from2
function Sub:backward(idx, gys)
  local gy = gys[1]
  local ga, gb
  if wants(idx, 1) then ga = unbroadcast(gy, self._sa) end
  if wants(idx, 2) then gb = unbroadcast(M.neg(gy), self._sb) end
  return { ga, gb }
end
function Sub:backward_tensors(idx, gys, gxs)
  local gy = gys[1]
  if wants(idx, 1) then gxs[1] = unbroadcast_tensor(gy, self._sa) end
  if wants(idx, 2) then
    local gb = T_neg(gy)
    gxs[2] = unbroadcast_tensor(gb, self._sb)
  end
end

local SubFromConstant = FunctionNode:extend('SubFromConstant')
M.SubFromConstant = SubFromConstant
function SubFromConstant:label() return 'const - _' end
function SubFromConstant:forward1(x) return T_sub(self.value, x) end
SubFromConstant.forward = forward_from1
SubFromConstant.backward, SubFromConstant.backward_tensors = negated_backward, negated_backward_tensors

local Mul = FunctionNode:extend('Mul')
M.Mul = Mul
function Mul:label() return '_ * _' end
Mul._input_indexes_to_retain = R12   -- always both (a class field: see var_node)
Mul.forward2 = broadcasting_forward('mul', T_mul)
Mul.forward = forward_from2
function Mul:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local gy = gys[1]
  local ga, gb
  if wants(idx, 1) then ga = unbroadcast(M.mul(gy, xs[2]), self._sa) end
  if wants(idx, 2) then gb = unbroadcast(M.mul(gy, xs[1]), self._sb) end
  return { ga, gb }
end
-- The retained inputs are the nodes' data (what get_retained_inputs reads).
-- When gy is ours alone (own), input 1's product overwrites it (computed
-- last: input 2's product still reads gy); the result has gy's shape and
-- dtype whatever broadcasting happened.  An input whose gradient sum the
-- traversal hands over (a leaf reached many times: gxs[i] on entry) gets
-- its product added into that sum directly with T.addmul.
function Mul:backward_tensors(idx, gys, gxs, own)
  local gy = gys[1]
  local ins = self.inputs
  if wants(idx, 2) then
    local acc = gxs[2]
    if acc and not self._sb then
      T_addmul(acc, gy, ins[1].data)
    else
      local gb = T_mul(gy, ins[1].data)
      gxs[2] = unbroadcast_tensor(gb, self._sb)
    end
  end
  if wants(idx, 1) then
    local acc = gxs[1]
    if acc and not self._sa then
      T_addmul(acc, gy, ins[2].data)
    else
      local ga = T_mul(gy, ins[2].data, own and gy or nil)
      gxs[1] = unbroadcast_tensor(ga, self._sa)
    end
  end
end

local MulConstant = FunctionNode:extend('MulConstant')
M.MulConstant = MulConstant
function MulConstant:label() return '_ * const' end
function MulConstant:forward1(x) return T_mul(x, self.value) end
MulConstant.forward = forward_from1
function MulConstant:backward(idx, gys) return { M.mul(gys[1], self.value) } end
-- In place only for float gradients: a weak scalar keeps their dtype.
function MulConstant:backward_tensors(idx, gys, gxs, own)
  local gy = gys[1]
  gxs[1] = T_mul(gy, self.value, own and T.is_float_code[gy.ptr.dt] and gy or nil)
end

local Div = FunctionNode:extend('Div')
M.Div = Div
function Div:label() return '_ / _' end
Div._input_indexes_to_retain = R12   -- always both (a class field: see var_node)
Div.forward2 = broadcasting_forward('div', T_div)
Div.forward = forward_from2
function Div:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local gy = gys[1]
  local ga = M.div(gy, xs[2])
  local gb
  if wants(idx, 2) then gb = unbroadcast(M.neg(M.div(M.mul(ga, xs[1]), xs[2])), self._sb) end
  if wants(idx, 1) then ga = unbroadcast(ga, self._sa) end
  return { ga, gb }
end
function Div:backward_tensors(idx, gys, gxs, own)
  local gy = gys[1]
  local ins = self.inputs
  local a, b = ins[1].data, ins[2].data
  local ga = T_div(gy, b, own and gy or nil)
  if wants(idx, 2) then
    local gb = T_neg(T_div(T_mul(ga, a), b))
    gxs[2] = unbroadcast_tensor(gb, self._sb)
  end
  if wants(idx, 1) then gxs[1] = unbroadcast_tensor(ga, self._sa) end
end

local DivFromConstant = FunctionNode:extend('DivFromConstant')
M.DivFromConstant = DivFromConstant
function DivFromConstant:label() return 'const / _' end
DivFromConstant._input_indexes_to_retain = R1
function DivFromConstant:forward1(x)
  return T_div(self.value, x)
end
DivFromConstant.forward = forward_from1
function DivFromConstant:backward(idx, gys)
  local x = self:get_retained_inputs()[1]
  -- d(c/x) = -c / x^2
  return { M.div(M.mul(gys[1], -self.value), M.mul(x, x)) }
end

local Neg = FunctionNode:extend('Neg')
M.Neg = Neg
function Neg:label() return '-_' end
function Neg:forward1(x) return T_neg(x) end
Neg.forward = forward_from1
Neg.backward, Neg.backward_tensors = negated_backward, negated_backward_tensors

local PowVarVar = FunctionNode:extend('PowVarVar')
M.PowVarVar = PowVarVar
function PowVarVar:label() return '_ ** _' end
function PowVarVar:forward(inputs)
  local a, b = inputs[1], inputs[2]
  check_dtypes('pow', a, b)
  self:retain_inputs({ 1, 2 })
  self:retain_outputs({ 1 })
  local y = T_pow(a, b)
  note_broadcast(self, a, b, y)
  return { y }
end
function PowVarVar:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local a, b = xs[1], xs[2]
  local gy = gys[1]
  local ga, gb
  if wants(idx, 1) then ga = unbroadcast(M.mul(M.mul(gy, b), M.pow(a, M.sub(b, 1))), self._sa) end
  if wants(idx, 2) then
    local y = self:get_retained_outputs()[1]
    gb = unbroadcast(M.mul(M.mul(gy, y), log(a)), self._sb)
  end
  return { ga, gb }
end

local PowVarConst = FunctionNode:extend('PowVarConst')
M.PowVarConst = PowVarConst
function PowVarConst:label() return '_ ** const' end
PowVarConst._input_indexes_to_retain = R1
function PowVarConst:forward1(x)
  return T_pow(x, self.value)
end
PowVarConst.forward = forward_from1
function PowVarConst:backward(idx, gys)
  local x = self:get_retained_inputs()[1]
  local c = self.value
  local d
  if c == 2 then d = M.mul(x, 2)
  elseif c == 1 then return { gys[1] }
  else d = M.mul(M.pow(x, c - 1), c) end
  return { M.mul(gys[1], d) }
end

local PowConstVar = FunctionNode:extend('PowConstVar')
M.PowConstVar = PowConstVar
function PowConstVar:label() return 'const ** _' end
function PowConstVar:forward(inputs)
  self:retain_outputs({ 1 })
  return { T_pow(self.value, inputs[1]) }
end
function PowConstVar:backward(idx, gys)
  local y = self:get_retained_outputs()[1]
  return { M.mul(M.mul(gys[1], y), mlog(self.value)) }
end

-- Python's floor modulo: a % b = a - floor(a / b) * b.
local Mod = FunctionNode:extend('Mod')
M.Mod = Mod
function Mod:label() return '_ % _' end
function Mod:forward(inputs)
  local a, b = inputs[1], inputs[2]
  check_dtypes('mod', a, b)
  self:retain_inputs({ 1, 2 })
  local y = T_mod(a, b)
  note_broadcast(self, a, b, y)
  return { y }
end
function Mod:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local gy = gys[1]
  local ga, gb
  if wants(idx, 1) then ga = unbroadcast(gy, self._sa) end
  if wants(idx, 2) then
    local q = T_floor(T_div(xs[1]._data, xs[2]._data))
    gb = unbroadcast(M.neg(M.mul(gy, q)), self._sb)
  end
  return { ga, gb }
end

local ModConstant = FunctionNode:extend('ModConstant')
M.ModConstant = ModConstant
function ModConstant:label() return '_ % const' end
function ModConstant:forward(inputs) return { T_mod(inputs[1], self.value) } end
function ModConstant:backward(idx, gys) return { gys[1] } end

local ModFromConstant = FunctionNode:extend('ModFromConstant')
M.ModFromConstant = ModFromConstant
function ModFromConstant:label() return 'const % _' end
function ModFromConstant:forward(inputs)
  self:retain_inputs({ 1 })
  return { T_mod(self.value, inputs[1]) }
end
function ModFromConstant:backward(idx, gys)
  local x = self:get_retained_inputs()[1]
  local q = T_floor(T_div(self.value, x._data))
  return { M.neg(M.mul(gys[1], q)) }
end

local Absolute = FunctionNode:extend('Absolute')
M.Absolute = Absolute
function Absolute:label() return '|_|' end
function Absolute:forward(inputs)
  self:retain_inputs({ 1 })
  return { T.abs(inputs[1]) }
end
function Absolute:backward(idx, gys)
  local x = self:get_retained_inputs()[1]
  return { M.mul(gys[1], T_sign(x._data)) }
end

---------------------------------------------------------------------------
-- wrappers
---------------------------------------------------------------------------
-- Data and requires_grad of a Variable or tensor operand.
local function operand(x, fn, pos)
  if type(x) == 'table' then
    local d = x._data
    if d == nil or not x._is_variable then operand_error(fn, pos, x) end
    return d, x._requires_grad
  end
  if is_tensor(x) then return x, false end
  operand_error(fn, pos, x)
end

-- The nodes are built with every field apply1/apply2 and backprop will
-- set (_bp: the traversal's stamp on the functions it schedules), so the table is allocated at its final size once instead of growing
-- (and rehashing) key by key; false reads as "absent" everywhere.  Four
-- fields keep a two-input node's hash part at four slots: what is the same
-- for every node of a class (which inputs Mul retains, "no broadcasting")
-- lives on the class, and only a broadcasting node grows a field.
local function const_node(cls, x, c, d)
  local f = setmetatable({ false, value = c, rank = 0, inputs = false, outputs = false, _bp = 0 }, cls)
  if cls.forward1 then local r = f:apply1(x, d) return r end
  return f:apply({ x })[1]
end

local function var_node(cls, a, b, da, db)
  local f = setmetatable({ false, rank = 0, inputs = false, outputs = false, _bp = 0 }, cls)
  if cls.forward2 then local r = f:apply2(a, b, da, db) return r end
  return f:apply({ a, b })[1]
end
for _, cls in ipairs({ Add, Sub, Mul, Div, PowVarVar, Mod }) do cls._sa, cls._sb = false, false end

-- The wrapper of one binary operator, from what differs between them:
--   name         for errors ('add', ...)
--   kernel       the tensor function
--   on_numbers   the Lua result when both operands are numbers
--   node         the node of two array operands
--   right_node   the node of `array op number`, given right_value(number)
--                (the number itself unless said otherwise)
--   left_node    the node of `number op array`; a commutative operator has
--                none and swaps its operands instead
-- A closure per operator, so each keeps its own traces.
local function binary_operator(op)
  local name, kernel, on_numbers, node = op.name, op.kernel, op.on_numbers, op.node
  local right_node, left_node = op.right_node, op.left_node
  local right_value = op.right_value or function(c) return c end
  return function(a, b)
    if type(a) == 'number' then
      if type(b) == 'number' then return on_numbers(a, b) end
      if not left_node then
        a, b = b, a
      else
        local d, rg = operand(b, name, 2)
        if plain(rg) then local r = new_var(kernel(a, d), rg) return r end
        local r = const_node(left_node, b, a, d) return r
      end
    end
    if type(b) == 'number' then
      local d, rg = operand(a, name, 1)
      if plain(rg) then local r = new_var(kernel(d, b), rg) return r end
      local r = const_node(right_node, a, right_value(b), d) return r
    end
    local da, ra = operand(a, name, 1)
    local db, rb = operand(b, name, 2)
    local rg = ra or rb
    if plain(rg) then
      check_dtypes(name, da, db)
      local r = new_var(kernel(da, db), rg) return r
    end
    local r = var_node(node, a, b, da, db) return r
  end
end

local add = binary_operator { name = 'add', kernel = T_add, node = Add, right_node = AddConstant,
  on_numbers = function(a, b) return a + b end }
local mul = binary_operator { name = 'mul', kernel = T_mul, node = Mul, right_node = MulConstant,
  on_numbers = function(a, b) return a * b end }
-- x - c is x + (-c), x / c is x * (1/c): the constant nodes of add and mul
local sub = binary_operator { name = 'sub', kernel = T_sub, node = Sub, left_node = SubFromConstant,
  right_node = AddConstant, right_value = function(c) return -c end,
  on_numbers = function(a, b) return a - b end }
local div = binary_operator { name = 'div', kernel = T_div, node = Div, left_node = DivFromConstant,
  right_node = MulConstant, right_value = function(c) return 1 / c end,
  on_numbers = function(a, b) return a / b end }
local pow = binary_operator { name = 'pow', kernel = T_pow, node = PowVarVar, left_node = PowConstVar,
  right_node = PowVarConst, on_numbers = function(a, b) return a ^ b end }
local mod = binary_operator { name = 'mod', kernel = T_mod, node = Mod, left_node = ModFromConstant,
  right_node = ModConstant, on_numbers = function(a, b) return a % b end }

local function neg(x)
  if type(x) == 'number' then return -x end
  local d, rg = operand(x, 'neg', 1)
  if plain(rg) then local r = new_var(T_neg(d), rg) return r end
  local r = setmetatable({ false, rank = 0, inputs = false, outputs = false, _bp = 0 }, Neg):apply1(x, d)
  return r
end

local function absolute(x)
  local d, rg = operand(x, 'absolute', 1)
  if plain(rg) then local r = new_var(T.abs(d), rg) return r end
  return setmetatable({}, Absolute):apply({ x })[1]
end

M.add2, M.sub, M.mul, M.div, M.pow, M.mod, M.neg, M.absolute = add, sub, mul, div, pow, mod, neg, absolute
M.add = add

-- F.add(a, b, c, ...): the sum of any number of operands.
function M.add_n(...)
  local n = select('#', ...)
  local xs = { ... }
  if n == 0 then error('add: expected at least one operand', 2) end
  local acc = xs[1]
  if n == 1 then return Variable.as_variable(acc) end
  for i = 2, n do acc = add(acc, xs[i]) end
  return acc
end

---------------------------------------------------------------------------
-- install the operators
---------------------------------------------------------------------------
Variable.__add = add
Variable.__sub = sub
Variable.__mul = mul
Variable.__div = div
Variable.__pow = pow
Variable.__mod = mod
Variable.__unm = neg
function Variable:__abs() return absolute(self) end
Variable.abs = absolute

-- `tensor op Variable` reaches the tensor's metamethod first; the tensor
-- namespace functions it calls hand such mixed calls to the Variable
-- operators.
local function is_var(x) return type(x) == 'table' and x._is_variable == true end
local function intercept(name, varfn)
  local orig = T[name]
  if orig == nil or T['_var_' .. name] then return end
  T['_var_' .. name] = orig
  T[name] = function(a, b, out)
    if is_var(a) or is_var(b) then return varfn(a, b) end
    return orig(a, b, out)
  end
end
intercept('add', add)
intercept('sub', sub)
intercept('mul', mul)
intercept('div', div)
intercept('pow', pow)
intercept('mod', mod)

-- Chainer's elementwise nodes: inputs sharing one memory layout
-- (chainer.memory_layouts) pass through it, and the output takes it.
for _, node in ipairs { Neg, Absolute, Add, AddConstant, Sub, SubFromConstant, Mul, MulConstant, Div,
    DivFromConstant, PowVarVar, PowVarConst, PowConstVar } do
  node.is_elementwise = true
end

return M

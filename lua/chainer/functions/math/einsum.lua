-- functions/math/einsum.lua: F.einsum(subscripts, a, b, ...), NumPy's
-- Einstein summation: 'ij,jk->ik', implicit outputs ('ij,jk'), '...' for
-- leading broadcast axes, repeated subscripts inside one operand (a
-- diagonal; forward only).
--
-- The forward pass contracts the operands pairwise with batched matrix
-- products (each pair: batch, free and summed letters are grouped by
-- transposes and reshapes, then one T.matmul); letters that occur in one
-- operand only are summed away first.  The gradient for an operand is
-- again an einsum of the upstream gradient with the other operands, so
-- double backprop works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

-- Characters used for the axes under '...'.
local ELL = { '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '!', '#', '$', '%', '&', '*' }

local function chars(s)
  local out = {}
  for c in s:gmatch('.') do out[#out + 1] = c end
  return out
end

-- Parses subscripts for operands of the given ndims into letter lists.
local function parse(sub, ndims)
  sub = sub:gsub('%s', '')
  local lhs, rhs = sub:match('^(.-)%->(.*)$')
  if not lhs then lhs = sub end
  local terms = {}
  for t in (lhs .. ','):gmatch('([^,]*),') do terms[#terms + 1] = t end
  if #terms ~= #ndims then
    error(string.format('einsum: the subscripts name %d operands but %d were given', #terms, #ndims), 3)
  end
  local ell_n = 0
  local ins = {}
  for k, t in ipairs(terms) do
    local pre, post = t:match('^(.-)%.%.%.(.*)$')
    local list
    if pre then
      local explicit = #pre + #post
      local e = ndims[k] - explicit
      if e < 0 then
        error(string.format('einsum: operand %d has %d axes, fewer than its subscripts %q name', k, ndims[k], t), 3)
      end
      if e > ell_n then ell_n = e end
      list = chars(pre)
      for i = 1, e do list[#list + 1] = { ell = e - i } end   -- counted from the right
      for _, c in ipairs(chars(post)) do list[#list + 1] = c end
    else
      list = chars(t)
      if #list ~= ndims[k] then
        error(string.format('einsum: operand %d has %d axes but its subscripts %q name %d', k, ndims[k], t, #list), 3)
      end
    end
    for _, c in ipairs(list) do
      if type(c) == 'string' and not c:match('%a') then
        error(string.format('einsum: invalid subscript character %q', c), 3)
      end
    end
    ins[k] = list
  end
  if ell_n > #ELL then error('einsum: too many axes under ...', 3) end
  -- resolve ellipsis placeholders to characters (aligned from the right)
  local function resolve(list)
    for i, c in ipairs(list) do
      if type(c) == 'table' then list[i] = ELL[ell_n - c.ell] end
    end
    return list
  end
  for k = 1, #ins do resolve(ins[k]) end
  local out
  if rhs then
    local pre, post = rhs:match('^(.-)%.%.%.(.*)$')
    if pre then
      out = chars(pre)
      for i = 1, ell_n do out[#out + 1] = ELL[i] end
      for _, c in ipairs(chars(post)) do out[#out + 1] = c end
    else
      out = chars(rhs)
    end
  else
    -- implicit output: the '...' axes, then letters seen once, sorted
    local count = {}
    for _, list in ipairs(ins) do for _, c in ipairs(list) do count[c] = (count[c] or 0) + 1 end end
    out = {}
    for i = 1, ell_n do out[#out + 1] = ELL[i] end
    local once = {}
    for c, n in pairs(count) do if n == 1 and c:match('%a') then once[#once + 1] = c end end
    table.sort(once)
    for _, c in ipairs(once) do out[#out + 1] = c end
  end
  local seen = {}
  for _, c in ipairs(out) do
    if seen[c] then error(string.format('einsum: output subscript %q appears twice', c), 3) end
    seen[c] = true
  end
  return ins, out
end

local function index_of(list, c)
  for i = 1, #list do if list[i] == c then return i end end
  return nil
end

-- Takes diagonals for letters repeated inside one operand.
local function diagonals(t, letters)
  letters = { unpack(letters) }
  local again = true
  while again do
    again = false
    for i = 1, #letters do
      local j = nil
      for k = i + 1, #letters do if letters[k] == letters[i] then j = k break end end
      if j then
        local c = letters[i]
        t = t:diagonal(0, i - 1, j - 1)
        table.remove(letters, j)
        table.remove(letters, i)
        letters[#letters + 1] = c
        again = true
        break
      end
    end
  end
  return t, letters
end

-- Sums away the letters of t that are not in `keep`.
local function sum_unneeded(t, letters, keep)
  local axes, rest = {}, {}
  for i, c in ipairs(letters) do
    if keep[c] then rest[#rest + 1] = c else axes[#axes + 1] = i - 1 end
  end
  if #axes == 0 then return t, letters end
  return T.sum(t, { axis = axes }), rest
end

local function transpose_to(t, letters, order)
  local perm, same = {}, true
  for k, c in ipairs(order) do
    perm[k] = index_of(letters, c) - 1
    if perm[k] ~= k - 1 then same = false end
  end
  if same then return t end
  return t:transpose(perm)
end

-- The contraction itself, on tensors.
local function contract(ops, ins, out)
  local size = {}
  for k, t in ipairs(ops) do
    local s = t.shape
    for i, c in ipairs(ins[k]) do
      if size[c] ~= nil and size[c] ~= s[i] then
        error(string.format("einsum: subscript '%s' has size %d in one operand and %d in another", c, size[c], s[i]), 0)
      end
      size[c] = s[i]
    end
  end
  for _, c in ipairs(out) do
    if size[c] == nil then
      error(string.format("einsum: output subscript '%s' does not appear in any operand", c), 0)
    end
  end
  local outset = {}
  for _, c in ipairs(out) do outset[c] = true end
  local function keep_after(k)
    local keep = {}
    for c in pairs(outset) do keep[c] = true end
    for j = k + 1, #ops do for _, c in ipairs(ins[j]) do keep[c] = true end end
    return keep
  end
  local cur, cl = diagonals(ops[1], ins[1])
  local keep1 = keep_after(1)
  cur, cl = sum_unneeded(cur, cl, keep1)
  for k = 2, #ops do
    local t, tl = diagonals(ops[k], ins[k])
    local keep = keep_after(k)
    -- letters of t needed later or shared with cur
    local kt = {}
    for c in pairs(keep) do kt[c] = true end
    for _, c in ipairs(cl) do kt[c] = true end
    t, tl = sum_unneeded(t, tl, kt)
    local inT = {}
    for _, c in ipairs(tl) do inT[c] = true end
    local inC = {}
    for _, c in ipairs(cl) do inC[c] = true end
    local batch, fa, sum_, fb = {}, {}, {}, {}
    for _, c in ipairs(cl) do
      if inT[c] then
        if keep[c] then batch[#batch + 1] = c else sum_[#sum_ + 1] = c end
      else
        fa[#fa + 1] = c
      end
    end
    for _, c in ipairs(tl) do if not inC[c] then fb[#fb + 1] = c end end
    local function prod(list) local n = 1 for _, c in ipairs(list) do n = n * size[c] end return n end
    local B, Fa, S, Fb = prod(batch), prod(fa), prod(sum_), prod(fb)
    local oa = {}
    for _, l in ipairs({ batch, fa, sum_ }) do for _, c in ipairs(l) do oa[#oa + 1] = c end end
    local ob = {}
    for _, l in ipairs({ batch, sum_, fb }) do for _, c in ipairs(l) do ob[#ob + 1] = c end end
    local A = transpose_to(cur, cl, oa):reshape({ B, Fa, S })
    local Bm = transpose_to(t, tl, ob):reshape({ B, S, Fb })
    local R = T.matmul(A, Bm)
    local rl, rs = {}, {}
    for _, l in ipairs({ batch, fa, fb }) do
      for _, c in ipairs(l) do rl[#rl + 1] = c rs[#rs + 1] = size[c] end
    end
    cur, cl = R:reshape(rs), rl
  end
  cur, cl = sum_unneeded(cur, cl, outset)
  cur = transpose_to(cur, cl, out)
  cur = cur:contiguous()
  return cur
end
M._contract = contract

local EinSum = FunctionNode:extend('EinSum')
M.EinSum = EinSum

function EinSum:forward(inputs)
  local n = #inputs
  local idx = {}
  for i = 1, n do idx[i] = i end
  self:retain_inputs(idx)
  for i = 2, n do H.same_dtype(inputs[1], inputs[i], 'einsum', 'operand 1', 'operand ' .. i, 3) end
  self._shapes = {}
  for i = 1, n do self._shapes[i] = inputs[i].shape end
  return { contract(inputs, self.ins, self.out) }
end

local function apply(ops, ins, out)
  local f = setmetatable({}, EinSum)
  f.ins, f.out = ins, out
  return f:apply(ops)[1]
end

function EinSum:backward(idx, gys)
  local F = H.F()
  local xs = self:get_retained_inputs()
  local gy = gys[1]
  local ret = { n = #xs }
  for _, k in ipairs(idx) do
    local sub = self.ins[k]
    local dup = {}
    for _, c in ipairs(sub) do
      if dup[c] then error('einsum: the gradient for an operand with a repeated subscript is not supported', 0) end
      dup[c] = true
    end
    -- letters available from the output and the other operands
    local avail = {}
    for _, c in ipairs(self.out) do avail[c] = true end
    local ops, ins = { gy }, { self.out }
    for j = 1, #xs do
      if j ~= k then
        ops[#ops + 1] = xs[j]
        ins[#ins + 1] = self.ins[j]
        for _, c in ipairs(self.ins[j]) do avail[c] = true end
      end
    end
    local target, shape1 = {}, {}
    local full = self._shapes[k]
    local missing = false
    for i, c in ipairs(sub) do
      if avail[c] then target[#target + 1] = c shape1[i] = full[i]
      else shape1[i] = 1 missing = true end
    end
    local g = apply(ops, ins, target)
    if missing then g = F.broadcast_to(F.reshape(g, shape1), full) end
    ret[k] = g
  end
  return ret
end

-- F.einsum('ij,jk->ik', a, b)
function M.einsum(subscripts, ...)
  if type(subscripts) ~= 'string' then
    error('einsum: the first argument must be the subscripts string (got ' .. type(subscripts) .. ')', 2)
  end
  local ops = { ... }
  local n = select('#', ...)
  if n == 0 then error('einsum: expected at least one operand', 2) end
  local ndims = {}
  for i = 1, n do
    local d = args.float_array('einsum', 'operand ' .. i, ops[i])
    ndims[i] = d.ptr.nd
  end
  local ins, out = parse(subscripts, ndims)
  return apply(ops, ins, out)
end

return M

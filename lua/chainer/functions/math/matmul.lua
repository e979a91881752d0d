-- functions/math/matmul.lua: F.matmul(a, b, {transa =, transb =}), NumPy's
-- matmul (batched, with broadcast batch axes) where transa/transb transpose
-- the last two axes.  1-D operands are promoted to matrices and the added
-- axis is removed again, as in NumPy.
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local args = require 'chainer._args'

local M = {}

local OPTIONS = args.accept { 'transa', 'transb' }

local MatMul = FunctionNode:extend('MatMul')
M.MatMul = MatMul

function MatMul:forward(inputs)
  local a, b = inputs[1], inputs[2]
  if a.ptr.dt ~= b.ptr.dt then
    error(string.format('matmul: the operands have different dtypes (%s and %s); cast one with astype first',
      a.dtype, b.dtype), 3)
  end
  self:retain_inputs({ 1, 2 })
  local y = T.matmul(a, b, { transa = self.transa, transb = self.transb })
  -- batch axes may broadcast: remember the shapes to sum gradients back
  if a.ptr.nd > 2 or b.ptr.nd > 2 then
    self._sa, self._sb = a.shape, b.shape
  end
  return { y }
end

-- y = op_a(A) @ op_b(B):
--   dA = gy @ op_b(B)^T        (transposed again when transa)
--   dB = op_a(A)^T @ gy        (transposed again when transb)
function MatMul:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local a, b = xs[1], xs[2]
  local gy = gys[1]
  local ta, tb = self.transa and true or false, self.transb and true or false
  local ga, gb
  local sum_to = require('chainer.functions.math.sum_to').sum_to
  for k = 1, #idx do
    if idx[k] == 1 then
      if ta then ga = M.matmul(b, gy, { transa = tb, transb = true })
      else ga = M.matmul(gy, b, { transb = not tb }) end
      if self._sa then ga = sum_to(ga, self._sa) end
    else
      if tb then gb = M.matmul(gy, a, { transa = true, transb = ta })
      else gb = M.matmul(a, gy, { transa = not ta }) end
      if self._sb then gb = sum_to(gb, self._sb) end
    end
  end
  return { ga, gb }
end

function M.matmul(a, b, opts)
  local da, db = args.array('matmul', 'a', a), args.array('matmul', 'b', b)
  local ta, tb = false, false
  if opts ~= nil then
    opts = args.options('matmul', opts, OPTIONS)
    ta, tb = opts.transa and true or false, opts.transb and true or false
  end
  local reshape = require('chainer.functions.array.reshape').reshape
  local a1, b1 = da.ptr.nd == 1, db.ptr.nd == 1
  if a1 then a = reshape(a, { 1, tonumber(da.ptr.dim[0]) }) ta = false end
  if b1 then b = reshape(b, { tonumber(db.ptr.dim[0]), 1 }) tb = false end
  local f = setmetatable({}, MatMul)
  f.transa, f.transb = ta, tb
  local y = f:apply({ a, b })[1]
  if a1 or b1 then
    local s = y._data.shape
    local out = {}
    local nd = #s
    for i = 1, nd do
      local drop = (a1 and i == nd - 1) or (b1 and i == nd)
      if not drop then out[#out + 1] = s[i] end
    end
    y = reshape(y, out)
  end
  return y
end

return M

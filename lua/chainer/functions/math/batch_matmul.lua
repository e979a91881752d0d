-- functions/math/batch_matmul.lua: F.batch_matmul(a, b, {transa =, transb =})
-- (deprecated in Chainer in favour of F.matmul): a batch of matrix
-- products; a 2-D operand (B, N) counts as B matrices of shape (N, 1).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'transa', 'transb' }

local function as_batch(F, x, d, name)
  local nd = d.ptr.nd
  if nd == 2 then return F.reshape(x, { d.shape[1], d.shape[2], 1 }) end
  if nd ~= 3 then
    error(string.format('batch_matmul: %s must be 2-d or 3-d (got a %d-d input of shape %s)', name, nd,
      T.shape_str(d.shape)), 3)
  end
  return x
end

function M.batch_matmul(a, b, opts)
  local F = H.F()
  local da = args.float_array('batch_matmul', 'a', a)
  local db = args.float_array('batch_matmul', 'b', b)
  opts = args.options('batch_matmul', opts, OPTIONS)
  a = as_batch(F, a, da, 'a')
  b = as_batch(F, b, db, 'b')
  if a.shape[1] ~= b.shape[1] then
    error(string.format('batch_matmul: a and b have different batch sizes (%d and %d)', a.shape[1], b.shape[1]), 2)
  end
  -- check the inner sizes here so that the error names batch_matmul
  local sa, sb = a.shape, b.shape
  local ka = opts.transa and sa[2] or sa[3]
  local kb = opts.transb and sb[3] or sb[2]
  if ka ~= kb then
    error(string.format('batch_matmul: a %s%s and b %s%s do not match (%d columns against %d rows)',
      T.shape_str(sa), opts.transa and ' (transposed)' or '', T.shape_str(sb), opts.transb and ' (transposed)' or '',
      ka, kb), 2)
  end
  return F.matmul(a, b, { transa = opts.transa, transb = opts.transb })
end

return M

-- testing/matrix.lua: chainer.testing.generate_matrix.
--
--   testing.generate_matrix({3, 4}, 'float32', {singular_values = {3, 2, 1}})
--   testing.generate_matrix({5, 2, 2}, nil, {singular_values = 1})   -- 5 orthogonal matrices
--
-- A random matrix (or a stack of them: shape (B..., M, N)) whose singular
-- values are the given ones, broadcast to (B..., K) with K = min(M, N).  For
-- specs of linear algebra that are unstable on badly conditioned input.
-- Each matrix is U diag(s) V^T with U (M x K) and V (N x K) random
-- orthonormal columns (from the Orthogonal initializer: Gaussian samples
-- orthonormalised in float64), drawn from chainer.tensor.random's stream.
-- dtype is a float dtype (default float64, Chainer's `float`); chainlua has
-- no complex dtypes.
local T = require 'chainer.tensor'
local args = require 'chainer._args'

local M = {}

local OPTIONS = args.accept { 'singular_values' }
local FLOATS = { float16 = true, float32 = true, float64 = true }

local function shape_text(shape) return '{' .. table.concat(shape, ', ') .. '}' end

-- The singular values as a float64 tensor broadcast to batch_shape + {k}.
local function singular_values_for(sv, batch_shape, k)
  local ok, t = pcall(function()
    if T.is_tensor(sv) then return sv:to_cpu():astype('float64') end
    return T.array(sv, 'float64')
  end)
  if not ok or (type(sv) ~= 'number' and type(sv) ~= 'table' and not T.is_tensor(sv)) then
    args.fail(string.format('generate_matrix: singular_values must be a number, a table of numbers or a tensor ' ..
      '(got %s)', type(sv)), 3)
  end
  for _, v in ipairs(t:reshape({ t.size }):tolist()) do
    if v < 0 then args.fail('generate_matrix: negative singular value is given (' .. v .. ')', 3) end
  end
  local target = {}
  for i, d in ipairs(batch_shape) do target[i] = d end
  target[#target + 1] = k
  local bok, b = pcall(function() return t:broadcast_to(target) end)
  if not bok then
    args.fail(string.format('generate_matrix: singular_values of shape %s cannot be broadcast to %s ' ..
      '(the batch shape and min(M, N))', shape_text(t.shape), shape_text(target)), 3)
  end
  return b
end

-- generate_matrix(shape, [dtype = 'float64'], {singular_values = ...})
function M.generate_matrix(shape, dtype, opts)
  if args.is_options(dtype) and opts == nil then dtype, opts = nil, dtype end
  opts = args.options('generate_matrix', opts, OPTIONS)
  if type(shape) ~= 'table' then
    args.fail(string.format('generate_matrix: shape must be a table of integers (got %s)', type(shape)), 2)
  end
  for i, d in ipairs(shape) do
    if type(d) ~= 'number' or d < 0 or d ~= math.floor(d) then
      args.fail(string.format('generate_matrix: shape[%d] must be a non-negative integer (got %s)', i,
        tostring(d)), 2)
    end
  end
  if #shape <= 1 then
    args.fail('generate_matrix: shape ' .. shape_text(shape) .. ' is invalid for matrices: too few axes', 2)
  end
  dtype = dtype or 'float64'
  if not FLOATS[dtype] then
    args.fail('generate_matrix: dtype ' .. tostring(dtype) .. ' is not supported (float16, float32 or float64)', 2)
  end
  if opts.singular_values == nil then args.fail('generate_matrix: singular_values is not given', 2) end

  local m, n = shape[#shape - 1], shape[#shape]
  local k = math.min(m, n)
  local batch_shape, batch = {}, 1
  for i = 1, #shape - 2 do batch_shape[i] = shape[i]; batch = batch * shape[i] end
  local sv = singular_values_for(opts.singular_values, batch_shape, k)
  if batch == 0 or k == 0 then return T.zeros(shape, dtype) end

  local orthonormal = require('chainer.initializers').Orthogonal(1)
  sv = sv:reshape({ batch, 1, k })
  local mats = {}
  for b = 1, batch do
    local ut, vt = T.zeros({ k, m }, 'float64'), T.zeros({ k, n }, 'float64')
    orthonormal(ut)                     -- k orthonormal rows of length m: U^T
    orthonormal(vt)                     -- V^T
    local u_s = ut:transpose() * sv:select(b - 1)   -- U diag(s): column j scaled by s_j
    mats[b] = T.matmul(u_s, vt)
  end
  return T.stack(mats):reshape(shape):astype(dtype)
end

return M

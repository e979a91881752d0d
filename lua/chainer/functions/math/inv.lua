-- functions/math/inv.lua: F.inv(a) and F.batch_inv(a) (matrix inverses),
-- F.det(a) and F.batch_det(a) (determinants), by LAPACK (T.inv, T.det).
-- Gradients, differentiable again:
--   inv: gA = -(Y^T @ gY @ Y^T) with Y = A^-1
--   det: gA = gy * det(A) * A^-T
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local function check(fn, a, nd)
  local d = args.float_array(fn, 'a', a, 3)
  if d.ptr.nd ~= nd then
    error(string.format('%s: a must be %s (got a %d-d input of shape %s)', fn,
      nd == 2 and 'a square matrix (2-d)' or 'a batch of square matrices (3-d)', d.ptr.nd, T.shape_str(d.shape)), 3)
  end
  local s = d.shape
  if s[nd] ~= s[nd - 1] then
    error(string.format('%s: the matrices must be square (got shape %s)', fn, T.shape_str(s)), 3)
  end
  if d.dtype == 'float16' then error(fn .. ': float16 is not supported (use float32 or float64)', 3) end
  return d
end

-- The public function fn: node cls applied to a matrix (nd = 2) or a batch
-- of matrices (nd = 3).
local function matrix_function(fn, cls, nd)
  return function(a)
    check(fn, a, nd)
    return setmetatable({}, cls):apply({ a })[1]
  end
end

local Inv = FunctionNode:extend('Inv')
M.Inv = Inv
function Inv:forward(inputs)
  self:retain_outputs({ 1 })
  return { T.inv(inputs[1]) }
end
function Inv:backward(idx, gys)
  local F = H.F()
  local y = self:get_retained_outputs()[1]
  return { -F.matmul(y, F.matmul(gys[1], y, { transb = true }), { transa = true }) }
end

M.inv = matrix_function('inv', Inv, 2)
M.batch_inv = matrix_function('batch_inv', Inv, 3)

local Det = FunctionNode:extend('Det')
M.Det = Det
function Det:forward(inputs)
  self:retain_inputs({ 1 })
  self:retain_outputs({ 1 })
  return { T.det(inputs[1]) }
end
function Det:backward(idx, gys)
  local F = H.F()
  local a = self:get_retained_inputs()[1]
  local y = self:get_retained_outputs()[1]
  local shape = a.shape
  local g = gys[1] * y
  local inv_t
  if #shape == 2 then
    inv_t = F.transpose(M.inv(a))
  else
    inv_t = F.transpose(M.batch_inv(a), { 0, 2, 1 })
    g = F.reshape(g, { shape[1], 1, 1 })
  end
  return { F.broadcast_to(g, shape) * inv_t }
end

M.det = matrix_function('det', Det, 2)
M.batch_det = matrix_function('batch_det', Det, 3)

return M

-- functions/math/cholesky.lua: F.cholesky(a), the lower triangular L with
-- L L^T = a for a symmetric positive definite matrix a (2-d, as Chainer;
-- only a's lower triangle is read).  The gradient is Chainer's symmetric
-- one: with Phi = tril(L^T gL) with its diagonal halved and
-- S = L^-T Phi L^-1, ga = (S + S^T) / 2.  It is built from F.inv and
-- F.matmul, so it is differentiable again.
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local Cholesky = FunctionNode:extend('Cholesky')
M.Cholesky = Cholesky

function Cholesky:forward(inputs)
  self:retain_outputs({ 1 })
  return { T.cholesky(inputs[1]) }
end

-- ones on and below the diagonal, 1/2 on it
local function half_diagonal_tril(n, dtype)
  local i = T.arange(n):reshape({ n, 1 })
  local lower = T.ge(i, T.arange(n)):astype(dtype)
  return lower - T.eye(n, dtype) * 0.5
end

function Cholesky:backward(idx, gys)
  local F = H.F()
  local L = self:get_retained_outputs()[1]
  local gL = gys[1]
  local L_inv = F.inv(L)
  local phi = F.matmul(L, gL, { transa = true }) * half_diagonal_tril(L.shape[1], L.dtype)
  local s = F.matmul(F.matmul(L_inv, phi, { transa = true }), L_inv)
  return { (s + F.transpose(s)) * 0.5 }
end

-- F.cholesky(a): a (n, n) float, symmetric positive definite
function M.cholesky(a)
  local d = args.float_array('cholesky', 'a', a)
  if d.ptr.nd ~= 2 or d.shape[1] ~= d.shape[2] then
    error(string.format('cholesky: a must be a square matrix (n, n) (got shape %s)', T.shape_str(d.shape)), 2)
  end
  return setmetatable({}, Cholesky):apply({ a })[1]
end

return M

-- functions/normalization/_symmetric_eigen.lua: eigenvalues and
-- eigenvectors of a batch of small real symmetric matrices (the channel
-- covariances of decorrelated batch normalization), as numpy.linalg.eigh:
-- eigenvalues ascending, eigenvectors in the columns.
--
-- Cyclic Jacobi rotations in float64 (Lua numbers): each sweep zeroes every
-- off-diagonal entry once; it converges quadratically and keeps the
-- eigenvectors orthonormal to rounding.  The matrices are C x C with C the
-- channels per group (tens at most), where this costs little next to the
-- covariance products.
local T = require 'chainer.tensor'

local M = {}

local MAX_SWEEPS = 60

-- Diagonalises the n x n Lua matrix a (a table of rows, destroyed) and
-- returns the eigenvalues (a list) and the eigenvector matrix v (rows).
local function jacobi(a, n)
  local v = {}
  for i = 1, n do
    v[i] = {}
    for j = 1, n do v[i][j] = (i == j) and 1 or 0 end
  end
  local scale = 0
  for i = 1, n do for j = 1, n do scale = scale + a[i][j] * a[i][j] end end
  local converged = false
  for _ = 1, MAX_SWEEPS do
    local off = 0
    for i = 1, n - 1 do for j = i + 1, n do off = off + a[i][j] * a[i][j] end end
    if off <= 1e-30 * scale or off == 0 then converged = true; break end
    for p = 1, n - 1 do
      for q = p + 1, n do
        local apq = a[p][q]
        if apq ~= 0 then
          -- the rotation angle that zeroes a[p][q] (Golub & Van Loan, sym.schur2)
          local tau = (a[q][q] - a[p][p]) / (2 * apq)
          local t = (tau >= 0 and 1 or -1) / (math.abs(tau) + math.sqrt(1 + tau * tau))
          local c = 1 / math.sqrt(1 + t * t)
          local s = t * c
          for k = 1, n do   -- columns p, q
            local akp, akq = a[k][p], a[k][q]
            a[k][p], a[k][q] = c * akp - s * akq, s * akp + c * akq
          end
          for k = 1, n do   -- rows p, q
            local apk, aqk = a[p][k], a[q][k]
            a[p][k], a[q][k] = c * apk - s * aqk, s * apk + c * aqk
          end
          for k = 1, n do
            local vkp, vkq = v[k][p], v[k][q]
            v[k][p], v[k][q] = c * vkp - s * vkq, s * vkp + c * vkq
          end
        end
      end
    end
  end
  if not converged then return nil end
  local w = {}
  for i = 1, n do w[i] = a[i][i] end
  return w, v
end

-- eigh(a): a (g, n, n) symmetric float tensor -> w (g, n), v (g, n, n),
-- both float64; v[:, :, i] is the eigenvector of w[:, i]; ascending w.
-- fn names the caller in errors.
function M.eigh(a, fn)
  local g, n = a.shape[1], a.shape[2]
  local mats = a:astype('float64'):totable()
  local ws, vs = {}, {}
  for b = 1, g do
    local w, v = jacobi(mats[b], n)
    if w == nil or w[1] ~= w[1] then
      error(string.format('%s: the eigen-decomposition of the covariance did not converge (NaN or Inf in x?)', fn), 4)
    end
    local order = {}
    for i = 1, n do order[i] = i end
    table.sort(order, function(i, j) return w[i] < w[j] end)
    ws[b], vs[b] = {}, {}
    for k, i in ipairs(order) do ws[b][k] = w[i] end
    for r = 1, n do
      vs[b][r] = {}
      for k, i in ipairs(order) do vs[b][r][k] = v[r][i] end
    end
  end
  return T.array(ws, 'float64'), T.array(vs, 'float64')
end

return M

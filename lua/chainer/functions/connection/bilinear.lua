-- functions/connection/bilinear.lua: F.bilinear(e1, e2, W, V1, V2, b).
--
-- y[i, l] = sum_jk e1[i, j] e2[i, k] W[j, k, l]
--           (+ sum_j e1[i, j] V1[j, l] + sum_k e2[i, k] V2[k, l] + b[l])
-- e1 (N, J...), e2 (N, K...) are flattened to (N, J), (N, K); W (J, K, L);
-- V1 (J, L), V2 (K, L), b (L) are given all together or not at all.  Built
-- from reshape, broadcast multiply and matmul (one (N, J*K) x (J*K, L)
-- gemm), so every order of gradient is available.
local args = require 'chainer._args'
local T = require 'chainer.tensor'

local M = {}

function M.bilinear(e1, e2, W, V1, V2, b)
  local fn = 'bilinear'
  local reshape = require('chainer.functions.array.reshape').reshape
  local bm = require 'chainer.functions.math.basic_math'
  local matmul = require('chainer.functions.math.matmul').matmul
  local broadcast_to = require('chainer.functions.array.broadcast_to').broadcast_to
  local d1 = args.array(fn, 'e1', e1)
  local d2 = args.array(fn, 'e2', e2)
  local dW = args.array(fn, 'W', W)
  local nv = (V1 ~= nil and 1 or 0) + (V2 ~= nil and 1 or 0) + (b ~= nil and 1 or 0)
  if nv ~= 0 and nv ~= 3 then
    error('bilinear: V1, V2 and b must be given all together or not at all', 2)
  end
  if d1.ptr.nd < 2 or d2.ptr.nd < 2 then
    error(string.format('bilinear: e1 and e2 must be at least 2-d (batch, features), got shapes %s and %s',
      T.shape_str(d1.shape), T.shape_str(d2.shape)), 2)
  end
  local n = d1.shape[1]
  if d2.shape[1] ~= n then
    error(string.format('bilinear: e1 and e2 have different batch sizes (%d and %d)', n, d2.shape[1]), 2)
  end
  if dW.ptr.nd ~= 3 then
    error('bilinear: W must be 3-d (J, K, L), got shape ' .. T.shape_str(dW.shape), 2)
  end
  local J, K, L = dW.shape[1], dW.shape[2], dW.shape[3]
  local j1, k1 = d1.size / math.max(n, 1), d2.size / math.max(n, 1)
  if n == 0 then j1, k1 = J, K end
  if j1 ~= J or k1 ~= K then
    error(string.format('bilinear: e1 has %d features and e2 %d, but W has shape %s (expected (%d, %d, L))', j1, k1,
      T.shape_str(dW.shape), j1, k1), 2)
  end
  if d1.dtype ~= dW.dtype or d2.dtype ~= dW.dtype then
    error(string.format('bilinear: e1, e2 and W must have one dtype (got %s, %s, %s)', d1.dtype, d2.dtype, dW.dtype), 2)
  end
  if nv == 3 then
    local v1, v2, db = args.array(fn, 'V1', V1), args.array(fn, 'V2', V2), args.array(fn, 'b', b)
    if v1.ptr.nd ~= 2 or v1.shape[1] ~= J or v1.shape[2] ~= L then
      error(string.format('bilinear: V1 must have shape (%d, %d), got %s', J, L, T.shape_str(v1.shape)), 2)
    end
    if v2.ptr.nd ~= 2 or v2.shape[1] ~= K or v2.shape[2] ~= L then
      error(string.format('bilinear: V2 must have shape (%d, %d), got %s', K, L, T.shape_str(v2.shape)), 2)
    end
    if db.ptr.nd ~= 1 or db.shape[1] ~= L then
      error(string.format('bilinear: b must have shape (%d,), got %s', L, T.shape_str(db.shape)), 2)
    end
  end
  local a = reshape(e1, { n, J, 1 })
  local c = reshape(e2, { n, 1, K })
  local outer = reshape(bm.mul(a, c), { n, J * K })
  local y = matmul(outer, reshape(W, { J * K, L }))
  if nv == 3 then
    y = bm.add(y, matmul(reshape(e1, { n, J }), V1))
    y = bm.add(y, matmul(reshape(e2, { n, K }), V2))
    y = bm.add(y, broadcast_to(b, { n, L }))
  end
  return y
end

return M

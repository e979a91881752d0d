-- spec/functions/pooling/_ref.lua: a plain-Lua pooling reference for the
-- pooling specs (loops over every window; small shapes only).
local T = require('chainer').tensor

local R = {}

local function outsize(n, k, s, p, cover_all)
  if cover_all then return math.floor((n + 2 * p - k + s - 1) / s) + 1 end
  return math.floor((n + 2 * p - k) / s) + 1
end
R.outsize = outsize

-- op: 'max', 'avg0' (divide by prod k), 'avg1' (by in-input count), 'sum'
-- returns y and, for max, the window-local argmax indexes
function R.pool(x, k, s, p, cover_all, op)
  local shape = x.shape
  local nsp = #shape - 2
  local flat = x:astype('float64'):contiguous():reshape({ -1 }):totable()
  local ins, outs = {}, {}
  for i = 1, 3 do ins[i], outs[i] = 1, 1 end
  local K, S, P = { 1, 1, 1 }, { 1, 1, 1 }, { 0, 0, 0 }
  local off = 3 - nsp
  for a = 1, nsp do
    ins[off + a] = shape[a + 2]
    K[off + a], S[off + a], P[off + a] = k[a], s[a], p[a]
    outs[off + a] = outsize(shape[a + 2], k[a], s[a], p[a], cover_all)
  end
  local planes = shape[1] * shape[2]
  local y, idx = {}, {}
  for pl = 0, planes - 1 do
    for od = 0, outs[1] - 1 do for oh = 0, outs[2] - 1 do for ow = 0, outs[3] - 1 do
      local best, bi, acc, cnt = -math.huge, 0, 0, 0
      local first = true
      for kd = 0, K[1] - 1 do for kh = 0, K[2] - 1 do for kw = 0, K[3] - 1 do
        local d, h, w = od * S[1] - P[1] + kd, oh * S[2] - P[2] + kh, ow * S[3] - P[3] + kw
        local inside = d >= 0 and d < ins[1] and h >= 0 and h < ins[2] and w >= 0 and w < ins[3]
        if inside then
          local v = flat[pl * ins[1] * ins[2] * ins[3] + (d * ins[2] + h) * ins[3] + w + 1]
          if first or v > best then best, bi, first = v, (kd * K[2] + kh) * K[3] + kw, false end
          acc, cnt = acc + v, cnt + 1
        end
      end end end
      local v
      if op == 'max' then v = best
      elseif op == 'avg0' then v = acc / (K[1] * K[2] * K[3])
      elseif op == 'avg1' then v = acc / cnt
      else v = acc end
      y[#y + 1] = v
      idx[#idx + 1] = bi
    end end end
  end
  local oshape = { shape[1], shape[2] }
  for a = 1, nsp do oshape[a + 2] = outs[off + a] end
  return T.array(y, 'float64'):reshape(oshape):astype(x.dtype), T.array(idx, 'int32'):reshape(oshape)
end

-- distinct values (no ties), spaced 0.1 apart: max pooling is smooth there
function R.distinct(shape, dtype)
  local n = 1
  for _, v in ipairs(shape) do n = n * v end
  local perm = T.random.permutation(n):astype('float64')
  return ((perm - n / 2) * 0.1):reshape(shape):astype(dtype)
end

return R

-- functions/loss/_checks.lua: argument checks shared by the loss and
-- evaluation functions (not exported into F): shapes and dtypes of pairs,
-- ranks, the reduce option, label ranges.  Arrays and options themselves go
-- through chainer._args.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local shape_equal = require('chainer.functions.math.sum_to').shape_equal

local L = {}

-- The inputs of a sampled softmax-like loss (black_out, negative_sampling):
-- x (B, D) float, t (B,) labels, W (V, D) of x's dtype.  Returns B and D.
-- Errors blame the caller of the public function.
function L.embedding_batch(fn, xd, td, wd)
  L.ndim(fn, 'x', xd, 2, 3)
  L.ndim(fn, 'W', wd, 2, 3)
  if wd.dtype ~= xd.dtype then
    error(string.format('%s: x and W must have the same dtype (got %s and %s)', fn, xd.dtype, wd.dtype), 3)
  end
  local b, d = xd.shape[1], xd.shape[2]
  if wd.shape[2] ~= d then
    error(string.format('%s: W must have %d columns to match x of shape %s, got %s', fn, d, T.shape_str(xd.shape),
      T.shape_str(wd.shape)), 3)
  end
  if td.ptr.nd ~= 1 or td.shape[1] ~= b then
    error(string.format('%s: t must have shape (%d,), got %s', fn, b, T.shape_str(td.shape)), 3)
  end
  return b, d
end

-- Two inputs of the same shape and dtype.
function L.pair(fn, an, a, bn, b, level)
  level = (level or 2) + 1
  if not shape_equal(a, b.shape) then
    error(string.format('%s: %s and %s must have the same shape (got %s and %s)', fn, an, bn,
      T.shape_str(a.shape), T.shape_str(b.shape)), level)
  end
  if a.dtype ~= b.dtype then
    error(string.format('%s: %s and %s must have the same dtype (got %s and %s)', fn, an, bn, a.dtype, b.dtype), level)
  end
end

-- The two arrays of an elementwise loss (x0 float, x1 of its shape and
-- dtype), checked for the public function fn.
function L.x0_x1(fn, x0, x1)
  local a, b = args.float_array(fn, 'x0', x0, 3), args.array(fn, 'x1', x1, 3)
  L.pair(fn, 'x0', a, 'x1', b, 3)
end

-- Labels t that fit scores y: t has y's shape without axis 1 (the classes).
function L.labels_fit_scores(fn, yd, td, level)
  local ys, ts = yd.shape, td.shape
  local ok = #ys >= 2 and #ts == #ys - 1 and ts[1] == ys[1]
  for i = 3, #ys do ok = ok and ts[i - 1] == ys[i] end
  if not ok then
    error(string.format("%s: t of shape %s does not fit y of shape %s (expected y's shape without axis 1)", fn,
      T.shape_str(ts), T.shape_str(ys)), (level or 2) + 1)
  end
end

-- A vector t with one entry per row of x: shape (N,) for x (N, ...).
function L.one_per_row(fn, targ, t, xarg, x, level)
  if t.ptr.nd ~= 1 or t.shape[1] ~= x.shape[1] then
    error(string.format('%s: %s must have shape (%d,) to match %s of shape %s, got %s', fn, targ, x.shape[1], xarg,
      T.shape_str(x.shape), T.shape_str(t.shape)), (level or 2) + 1)
  end
end

function L.ndim(fn, arg, d, nd, level)
  if d.ptr.nd ~= nd then
    error(string.format('%s: %s must be %d-d, got shape %s', fn, arg, nd, T.shape_str(d.shape)), (level or 2) + 1)
  end
end

-- reduce option against a list of allowed values.
function L.reduce(fn, value, default, allowed, level)
  if value == nil or value == false then value = default end
  for _, a in ipairs(allowed) do if a == value then return value end end
  local q = {}
  for i, a in ipairs(allowed) do q[i] = "'" .. a .. "'" end
  error(string.format("%s: reduce must be %s (got %s)", fn, table.concat(q, ' or '), tostring(value)),
    (level or 2) + 1)
end

-- T.any(m) as a Lua boolean.
function L.any(m)
  local a = T.any(m)
  if type(a) == 'boolean' then return a end
  a = a:item()
  return a == true or a == 1
end

-- Labels: an integer tensor whose values are in [0, n) or equal `ignore`.
function L.labels(fn, arg, t, n, ignore, level)
  level = (level or 2) + 1
  if t.ptr.numel == 0 then return end
  local tt = t:astype('int64')
  local bad
  if ignore ~= nil then
    bad = T.logical_and(T.ne(tt, ignore), T.logical_or(T.lt(tt, 0), T.ge(tt, n)))
  else
    bad = T.logical_or(T.lt(tt, 0), T.ge(tt, n))
  end
  if L.any(bad) then
    local pos = T.nonzero(bad:reshape(-1)):reshape(-1):totable()[1]
    local v = tt:reshape(-1):totable()[pos + 1]
    error(string.format('%s: label %s[%d] (flat position) is %d, out of range for %d classes (expected 0..%d%s)',
      fn, arg, pos, v, n, n - 1, ignore ~= nil and (', or ignore_label ' .. ignore) or ''), level)
  end
end

return L

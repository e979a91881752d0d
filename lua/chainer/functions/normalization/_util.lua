-- functions/normalization/_util.lua: shared pieces of the normalization
-- family (not exported into F): the dtype check, the reduction layout of
-- batch normalization, and the Lua entry points of the C kernels
-- (runtime/cpu/batch_norm.c, lrn.c).
local ffi = require 'ffi'
local T = require 'chainer.tensor'

local C, check, box, wrap = T.C, T.check, T.box, T.wrap

local N = {}

local b1, b2, b3, b4 = ffi.new('ch_tensor*[1]'), ffi.new('ch_tensor*[1]'), ffi.new('ch_tensor*[1]'),
  ffi.new('ch_tensor*[1]')

-- b (a parameter or statistic) must have a's dtype; with mixed16_ok a
-- float16 x also takes float32 parameters (Chainer's mixed16: the
-- normalization links keep theirs in chainer.get_dtype(nil, 'float32')).
function N.same_dtype(fn, a, an, b, bn, level, mixed16_ok)
  if a.dtype ~= b.dtype and not (mixed16_ok and a.dtype == 'float16' and b.dtype == 'float32') then
    error(string.format('%s: %s has dtype %s but %s has %s (cast one with astype first)', fn, bn, b.dtype, an,
      a.dtype), (level or 2) + 1)
  end
end

-- The reduction layout of batch normalization for an x of shape xs and
-- Chainer's `axis` (nil: every axis but 1): axes (0-based, reduced),
-- gshape (the kept extents: gamma's shape), eshape (xs with 1 on reduced
-- axes), m (cells per channel) and the 3-d view (A, C, B) the kernel takes,
-- through a transpose `perm` when the kept axes are not adjacent.
function N.layout(fn, xs, axis, level)
  level = (level or 2) + 1
  local nd = #xs
  local red = {}
  if axis == nil or axis == false then
    red[1] = 0
    for a = 2, nd - 1 do red[#red + 1] = a end
  else
    local list = type(axis) == 'number' and { axis } or axis
    if type(list) ~= 'table' then error(string.format('%s: axis must be an integer or a table of integers', fn), level) end
    for _, a in ipairs(list) do
      if type(a) ~= 'number' or a ~= math.floor(a) or a < -nd or a >= nd then
        error(string.format('%s: axis %s is out of range for a %d-d x (expected %d..%d)', fn, tostring(a), nd, -nd,
          nd - 1), level)
      end
      red[#red + 1] = a < 0 and a + nd or a
    end
    table.sort(red)
    for i = 2, #red do
      if red[i] == red[i - 1] then error(string.format('%s: axis %d repeated', fn, red[i]), level) end
    end
  end
  local isred = {}
  for _, a in ipairs(red) do isred[a] = true end
  local L = { axes = red, gshape = {}, eshape = {}, m = 1, C = 1 }
  local first, last
  for a = 0, nd - 1 do
    if isred[a] then
      L.eshape[a + 1] = 1
      L.m = L.m * xs[a + 1]
    else
      L.gshape[#L.gshape + 1] = xs[a + 1]
      L.eshape[a + 1] = xs[a + 1]
      L.C = L.C * xs[a + 1]
      first = first or a
      last = a
    end
  end
  local adjacent = true
  if first then
    for a = first, last do if isred[a] then adjacent = false end end
  end
  if adjacent then
    local A, B = 1, 1
    for a = 0, (first or nd) - 1 do A = A * xs[a + 1] end
    if last then for a = last + 1, nd - 1 do B = B * xs[a + 1] end end
    L.shape3 = { A, L.C, B }
  else
    -- reduced axes first, kept axes last: (m, C, 1)
    local perm, inv, pshape = {}, {}, {}
    for _, a in ipairs(red) do perm[#perm + 1] = a end
    for a = 0, nd - 1 do if not isred[a] then perm[#perm + 1] = a end end
    for i, a in ipairs(perm) do inv[a + 1] = i - 1; pshape[i] = xs[a + 1] end
    L.perm, L.inv, L.pshape = perm, inv, pshape
    L.shape3 = { L.m, L.C, 1 }
  end
  L.xshape = xs
  return L
end

-- x (tensor, shape L.xshape) -> the (A, C, B) view; and back.
function N.to3(L, x)
  if L.perm then return x:transpose(L.perm):reshape(L.shape3) end
  return x:reshape(L.shape3)
end
function N.from3(L, y3)
  if L.perm then return y3:reshape(L.pshape):transpose(L.inv) end
  return y3:reshape(L.xshape)
end

-- float16 runs through float32
local function up(t) if t and t.dtype == 'float16' then return t:astype('float32') end return t end
local function down(t, dt) if t and dt == 'float16' then return t:astype('float16') end return t end

-- mean, var, inv_std are (C) vectors; y is (A, C, B).  y has x's dtype;
-- the statistics have gamma's (float32 beside a float16 x under mixed16).
function N.bn_forward(x3, gamma, beta, eps, want_y)
  local dt = x3.dtype
  local pdt = gamma and gamma.dtype or dt
  x3, gamma, beta = up(x3), up(gamma), up(beta)
  check(C.ch_batch_norm_forward(x3.ptr, gamma and gamma.ptr or nil, beta and beta.ptr or nil, eps,
    want_y and b1 or nil, b2, b3, b4), 3)
  local y = want_y and wrap(b1[0]) or nil
  return down(y, dt), down(wrap(b2[0]), pdt), down(wrap(b3[0]), pdt), down(wrap(b4[0]), pdt)
end

-- gx in x's dtype, ggamma and gbeta in gamma's.
function N.bn_backward(x3, gamma, gy3, mean, inv_std)
  local dt = x3.dtype
  local pdt = gamma and gamma.dtype or dt
  x3, gamma, gy3, mean, inv_std = up(x3), up(gamma), up(gy3), up(mean), up(inv_std)
  check(C.ch_batch_norm_backward(x3.ptr, gamma and gamma.ptr or nil, gy3.ptr, mean.ptr, inv_std.ptr, b1, b2, b3), 3)
  return down(wrap(b1[0]), dt), down(wrap(b2[0]), pdt), down(wrap(b3[0]), pdt)
end

function N.lrn_forward(x, n, k, alpha, beta)
  local dt = x.dtype
  check(C.ch_lrn_forward(up(x).ptr, n, k, alpha, beta, b1, b2), 3)
  return down(wrap(b1[0]), dt), down(wrap(b2[0]), dt)
end

function N.lrn_backward(x, y, unit_scale, gy, n, alpha, beta)
  local dt = x.dtype
  check(C.ch_lrn_backward(up(x).ptr, up(y).ptr, up(unit_scale).ptr, up(gy).ptr, n, alpha, beta, b1), 3)
  return down(wrap(b1[0]), dt)
end

return N

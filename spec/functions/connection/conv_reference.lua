-- spec helper: naive N-d convolution and transposed convolution on flat Lua
-- arrays (straight from the definition), the independent reference for the
-- convolution specs.  Not a spec itself (no _spec suffix).
local T = require 'chainer.tensor'

local R = {}

-- Gradient tolerances the convolution specs share: float32 sums many
-- products, so it gets looser bounds than float64.
R.tol = { float32 = { atol = 5e-4, rtol = 5e-3 }, float64 = { atol = 1e-6, rtol = 1e-5 } }

local helpers = require 'helpers'
local flat = helpers.vals
local function prod(s, i, j) local p = 1 for k = i, j do p = p * s[k] end return p end

-- Iterates all multi-indices of `dims` (1-based Lua array of extents),
-- calling f(idx) with a 0-based index array.
local function each(dims, f)
  local n = #dims
  for i = 1, n do if dims[i] == 0 then return end end
  local idx = {}
  for i = 1, n do idx[i] = 0 end
  while true do
    f(idx)
    local a = n
    while a >= 1 do
      idx[a] = idx[a] + 1
      if idx[a] < dims[a] then break end
      idx[a] = 0
      a = a - 1
    end
    if a < 1 then return end
  end
end

local function tup(v, n, d) if v == nil then v = d end if type(v) == 'number' then local t = {} for i = 1, n do t[i] = v end return t end return v end

-- What both references read: x's and W's shapes, the number of spatial
-- axes and the per-axis stride, pad and dilate, and groups.
local function geometry(x, W, opts)
  local xs, ws = x.shape, W.shape
  local nsp = #xs - 2
  return xs, ws, nsp, tup(opts.stride, nsp, 1), tup(opts.pad, nsp, 0), tup(opts.dilate, nsp, 1), opts.groups or 1
end

-- The flat offset, in a grid of extents dims, of the cell pos * s - p +
-- k * d on every axis; nil when it lies outside.
local function tap(pos, k, s, p, d, dims)
  local off = 0
  for a = 1, #dims do
    local i = pos[a] * s[a] - p[a] + k[a] * d[a]
    if i < 0 or i >= dims[a] then return nil end
    off = off * dims[a] + i
  end
  return off
end

-- The flat result y (N, Cout, *out) as a tensor of x's dtype.
local function output(y, x, N, Cout, out)
  local shape = { N, Cout }
  for a = 1, #out do shape[a + 2] = out[a] end
  return T.array(y, x.dtype):reshape(shape)
end

function R.outsize(size, k, s, p, d, cover_all)
  local dk = k + (k - 1) * (d - 1)
  if cover_all then return math.floor((size + 2 * p - dk + s - 1) / s) + 1 end
  return math.floor((size + 2 * p - dk) / s) + 1
end

-- y = conv(x, W) + b; opts: stride, pad, dilate, groups, cover_all
function R.conv(x, W, b, opts)
  opts = opts or {}
  local xs, ws, nsp, s, p, d, G = geometry(x, W, opts)
  local N, Cin, Cout, Cg = xs[1], xs[2], ws[1], ws[2]
  local out = {}
  for a = 1, nsp do out[a] = R.outsize(xs[a + 2], ws[a + 2], s[a], p[a], d[a], opts.cover_all) end
  local xf, wf = flat(x), flat(W)
  local bf = b and flat(b)
  local insz, ksz = {}, {}
  for a = 1, nsp do insz[a] = xs[a + 2] ksz[a] = ws[a + 2] end
  local Pin, Kk, P = prod(xs, 3, #xs), prod(ws, 3, #ws), prod(out, 1, nsp)
  local y = {}
  local Coutg = Cout / G
  for n = 0, N - 1 do
    for co = 0, Cout - 1 do
      local g = math.floor(co / Coutg)
      local ybase = (n * Cout + co) * P
      local oi = 0
      each(out, function(o)
        local acc = bf and bf[co + 1] or 0
        for c = 0, Cg - 1 do
          local ci = g * Cg + c
          local ki = 0
          each(ksz, function(k)
            local off = tap(o, k, s, p, d, insz)
            if off then
              acc = acc + xf[(n * Cin + ci) * Pin + off + 1] * wf[(co * Cg + c) * Kk + ki + 1]
            end
            ki = ki + 1
          end)
        end
        y[ybase + oi + 1] = acc
        oi = oi + 1
      end)
    end
  end
  return output(y, x, N, Cout, out)
end

-- y = deconv(x, W) + b (the adjoint of conv in x); W (Cin, Cout/g, *k);
-- opts: stride, pad, dilate, groups, outsize
function R.deconv(x, W, b, opts)
  opts = opts or {}
  local xs, ws, nsp, s, p, d, G = geometry(x, W, opts)
  local N, Cin, Cog = xs[1], xs[2], ws[2]
  local Cout = Cog * G
  local Cing = Cin / G
  local out = {}
  for a = 1, nsp do
    out[a] = opts.outsize and tup(opts.outsize, nsp)[a] or (s[a] * (xs[a + 2] - 1) + (ws[a + 2] - 1) * d[a] + 1 - 2 * p[a])
  end
  local xf, wf = flat(x), flat(W)
  local P, Pin, Kk = prod(out, 1, nsp), prod(xs, 3, #xs), prod(ws, 3, #ws)
  local y = {}
  for i = 1, N * Cout * P do y[i] = 0 end
  local insz, ksz = {}, {}
  for a = 1, nsp do insz[a] = xs[a + 2] ksz[a] = ws[a + 2] end
  for n = 0, N - 1 do
    for ci = 0, Cin - 1 do
      local g = math.floor(ci / Cing)
      local ii = 0
      each(insz, function(iv)
        local xv = xf[(n * Cin + ci) * Pin + ii + 1]
        for c = 0, Cog - 1 do
          local co = g * Cog + c
          local ki = 0
          each(ksz, function(k)
            local off = tap(iv, k, s, p, d, out)
            if off then
              local yi = (n * Cout + co) * P + off + 1
              y[yi] = y[yi] + xv * wf[(ci * Cog + c) * Kk + ki + 1]
            end
            ki = ki + 1
          end)
        end
        ii = ii + 1
      end)
    end
  end
  if b then
    local bf = flat(b)
    for n = 0, N - 1 do for co = 0, Cout - 1 do for j = 1, P do
      local yi = (n * Cout + co) * P + j
      y[yi] = y[yi] + bf[co + 1]
    end end end
  end
  return output(y, x, N, Cout, out)
end

function R.errors_with(f, ...)
  local ok, err = pcall(f)
  assert(not ok, 'expected an error')
  for _, s in ipairs({ ... }) do
    assert(tostring(err):find(s, 1, true), 'error message "' .. tostring(err) .. '" lacks "' .. s .. '"')
  end
end

return R

-- functions/array/spatial_transformer.lua: F.spatial_transformer_grid(theta,
-- output_shape) and F.spatial_transformer_sampler(x, grid) (Jaderberg et
-- al.'s spatial transformer, with Chainer's conventions).
--
-- grid: theta (B, 2, 3) applied to the homogeneous target coordinates
-- (x_t, y_t, 1), x_t and y_t on linspace(-1, 1); the result is (B, 2, H, W)
-- with the x (width) coordinate first.  One matmul with a constant matrix.
--
-- sampler: bilinear sampling of x (B, C, H, W) at grid (B, 2, out_h,
-- out_w), zero outside the image, exactly as Chainer computes it: x is
-- padded with one ring of zeros, coordinates are scaled to the padded
-- image and clipped to it, and the four neighbours are weighted by the
-- distances to the clipped point.  It is composed of a gather (Take, whose
-- gradient scatters into x) and elementwise arithmetic on the weights
-- (which carries the gradient to grid); as in Chainer, clipping does not
-- stop the gradient with respect to grid.  Composing costs about 4 gathers
-- of (B*out_h*out_w, C) and is differentiable twice.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local reshape = require('chainer.functions.array.reshape').reshape
local transpose = require('chainer.functions.array.transpose').transpose

local M = {}

local SIGNATURE = args.signature { 'output_shape' }

-- F.spatial_transformer_grid(theta, output_shape)
function M.spatial_transformer_grid(theta, output_shape)
  local v = args.parse('spatial_transformer_grid', SIGNATURE, 1, output_shape)
  local d = args.array('spatial_transformer_grid', 'theta', theta)
  output_shape = v.output_shape
  local s = d.shape
  if #s ~= 3 or s[2] ~= 2 or s[3] ~= 3 then
    error('spatial_transformer_grid: theta must be (B, 2, 3) (got ' .. T.shape_str(s) .. ')', 2)
  end
  if d.dtype ~= 'float32' and d.dtype ~= 'float64' then
    error('spatial_transformer_grid: theta must be float32 or float64 (got ' .. d.dtype .. ')', 2)
  end
  if type(output_shape) ~= 'table' or #output_shape ~= 2 then
    error('spatial_transformer_grid: output_shape must be a table {H, W}', 2)
  end
  local H, W = output_shape[1], output_shape[2]
  if type(H) ~= 'number' or type(W) ~= 'number' or H < 1 or W < 1 or H ~= math.floor(H) or W ~= math.floor(W) then
    error('spatial_transformer_grid: output_shape must hold positive integers', 2)
  end
  local function lin(n, i) return n > 1 and -1 + 2 * i / (n - 1) or -1 end
  local base = {}
  local n = H * W
  for i = 0, H - 1 do
    for j = 0, W - 1 do
      local k = i * W + j + 1
      base[k] = lin(W, j)          -- x_t
      base[n + k] = lin(H, i)      -- y_t
      base[2 * n + k] = 1
    end
  end
  local bt = T.array(base, d.dtype):reshape({ 3, n })
  local matmul = require('chainer.functions.math.matmul').matmul
  local B = s[1]
  local g = matmul(reshape(theta, { B * 2, 3 }), bt) -- (B*2, H*W)
  return reshape(g, { B, 2, H, W })
end

-- F.spatial_transformer_sampler(x, grid)
function M.spatial_transformer_sampler(x, grid)
  local fn = 'spatial_transformer_sampler'
  local dx = args.array(fn, 'x', x)
  local dg = args.array(fn, 'grid', grid)
  if dx.ptr.nd ~= 4 then error(string.format('%s: x must be 4-d (B, C, H, W) (got %d-d)', fn, dx.ptr.nd), 2) end
  local xs, gs = dx.shape, dg.shape
  if #gs ~= 4 or gs[2] ~= 2 or gs[1] ~= xs[1] then
    error(string.format('%s: grid must be (B, 2, out_h, out_w) with B = %d (got %s)', fn, xs[1], T.shape_str(gs)), 2)
  end
  if dx.dtype ~= dg.dtype or (dx.dtype ~= 'float32' and dx.dtype ~= 'float64') then
    error(string.format('%s: x and grid must both be float32 or both float64 (got %s and %s)', fn, dx.dtype,
      dg.dtype), 2)
  end
  local B, C, H, W = xs[1], xs[2], xs[3], xs[4]
  local oh, ow = gs[3], gs[4]
  local P = B * oh * ow
  local get_item = require('chainer.functions.array.get_item').get_item
  local pad = require('chainer.functions.array.pad').pad
  local take = require('chainer.functions.array._take')._take
  local gv = Variable.as_variable(grid)

  -- coordinates in the padded image, with the clipping passed through
  local function coord(c, n)
    local u = reshape(get_item(gv, { {}, c }), { P }) -- (P)
    u = (u + 1) * ((n - 1) / 2) + 1
    local ud = u.array
    local uc_d = T.clip(ud, 0, n + 1)
    local uc = u + (uc_d - ud)
    local u0 = T.clip(T.floor(uc_d), 0, n)
    return uc, u0, u0 + 1
  end
  local uc, u0, u1 = coord(0, W)
  local vc, v0, v1 = coord(1, H)

  local Wp, Hp = W + 2, H + 2
  local xp = pad(x, { { 0, 0 }, { 0, 0 }, { 1, 1 }, { 1, 1 } })
  xp = reshape(transpose(xp, { 0, 2, 3, 1 }), { B * Hp * Wp, C })
  local boff = T.repeat_(T.arange(0, B, 1, 'int64') * (Hp * Wp), oh * ow, 0) -- (P)
  local function gather(vv, uu)
    local idx = boff + (vv * Wp + uu):astype('int64')
    return take(xp, idx, 0, 'SpatialTransformerSampler') -- (P, C)
  end
  local function col(w) return reshape(w, { P, 1 }) end
  local du0, du1 = uc - u0, u1 - uc
  local dv0, dv1 = vc - v0, v1 - vc
  local y = col(du1 * dv1) * gather(v0, u0) + col(du0 * dv1) * gather(v0, u1)
    + col(du1 * dv0) * gather(v1, u0) + col(du0 * dv0) * gather(v1, u1)
  return transpose(reshape(y, { B, oh, ow, C }), { 0, 3, 1, 2 })
end

return M

-- functions/array/deformable_convolution_2d_sampler.lua:
-- F.deformable_convolution_2d_sampler(x, offset, W, b = nil, {stride = 1, pad = 0})
-- (Dai et al.'s deformable convolution, given the offsets).
--
-- x (n, c, h, w), offset (n, 2 kh kw, out_h, out_w): channels 0 .. kh kw - 1
-- shift the horizontal and kh kw .. 2 kh kw - 1 the vertical sampling
-- position of each kernel tap (taps in row-major order), W (out_c, c, kh,
-- kw), b (out_c).  Tap (i, j) of output (p, q) reads the zero-padded input
-- at (p sy + i + offset_y, q sx + j + offset_x) by bilinear interpolation,
-- and the samples are contracted with W as in a convolution.  As in Chainer
-- it is composed of differentiable functions (padding, the spatial
-- transformer sampler, matmul), so gradients reach x, offset, W and b, to
-- any order the sampler supports.
local args = require 'chainer._args'
local T = require 'chainer.tensor'

local M = {}

local SIGNATURE = args.signature { 'stride', 'pad' }

local function pair(fn, name, v)
  local a, b
  if type(v) == 'number' then a, b = v, v
  elseif type(v) == 'table' and getmetatable(v) == nil and #v == 2 then a, b = v[1], v[2]
  else error(string.format('%s: %s must be an integer or a table of 2 integers (got %s)', fn, name, tostring(v)), 3) end
  return a, b
end

local floats = { float32 = true, float64 = true }

function M.deformable_convolution_2d_sampler(x, offset, W, b, stride, pad)
  local fn = 'deformable_convolution_2d_sampler'
  local F = require 'chainer.functions'
  -- b may be omitted in front of the options table
  if args.is_options(b) then b, stride, pad = nil, b, nil end
  local v = args.parse(fn, SIGNATURE, 2, stride, pad)
  local sy, sx = pair(fn, 'stride', v.stride == nil and 1 or v.stride)
  local ph, pw = pair(fn, 'pad', v.pad == nil and 0 or v.pad)
  if sy < 1 or sx < 1 or ph < 0 or pw < 0 or sy % 1 ~= 0 or sx % 1 ~= 0 or ph % 1 ~= 0 or pw % 1 ~= 0 then
    error(string.format('%s: stride must be positive and pad non-negative integers (got %s, %s, %s, %s)', fn,
      sy, sx, ph, pw), 2)
  end
  local xd, od, wd = args.array(fn, 'x', x), args.array(fn, 'offset', offset), args.array(fn, 'W', W)
  for _, p in ipairs({ { 'x', xd }, { 'offset', od }, { 'W', wd } }) do
    if not floats[p[2].dtype] then
      error(string.format('%s: %s must be float32 or float64 (got %s)', fn, p[1], p[2].dtype), 2)
    end
    if p[2].ndim ~= 4 then
      error(string.format('%s: %s must be 4-d (got %d-d with shape %s)', fn, p[1], p[2].ndim,
        T.shape_str(p[2].shape)), 2)
    end
  end
  if od.dtype ~= xd.dtype or wd.dtype ~= xd.dtype then
    error(string.format('%s: x, offset and W must have the same dtype (got %s, %s, %s)', fn, xd.dtype, od.dtype,
      wd.dtype), 2)
  end
  local n, c, h, w = xd.shape[1], xd.shape[2], xd.shape[3], xd.shape[4]
  local out_c, kh, kw = wd.shape[1], wd.shape[3], wd.shape[4]
  if wd.shape[2] ~= c then
    error(string.format('%s: W has %d input channels but x has %d', fn, wd.shape[2], c), 2)
  end
  local os = od.shape
  if os[1] ~= n or os[2] ~= 2 * kh * kw then
    error(string.format('%s: offset must be (n, 2 * kh * kw, out_h, out_w) = (%d, %d, out_h, out_w) (got %s)', fn,
      n, 2 * kh * kw, T.shape_str(os)), 2)
  end
  if b ~= nil then
    local bd = args.array(fn, 'b', b)
    if bd.ndim ~= 1 or bd.shape[1] ~= out_c then
      error(string.format('%s: b must be (%d) (got %s)', fn, out_c, T.shape_str(bd.shape)), 2)
    end
    if bd.dtype ~= xd.dtype then
      error(string.format('%s: b must have the dtype of x (%s, got %s)', fn, xd.dtype, bd.dtype), 2)
    end
  end
  local out_h, out_w, khkw = os[3], os[4], kh * kw
  local dt = xd.dtype

  -- base sampling positions (before the offsets) of tap k at output (p, q):
  -- (p sy + k // kw, q sx + k % kw), in the padded image
  local bx = T.zeros({ 1, khkw, out_h, out_w }, 'float64')
  local by = T.zeros({ 1, khkw, out_h, out_w }, 'float64')
  local grid0 = T.zeros({ 1, kh, kw, 1 }, 'float64')
  local tx = (grid0 + T.arange(kw, 'float64'):reshape({ 1, 1, kw, 1 })):reshape({ 1, khkw, 1, 1 })
  local ty = (grid0 + T.arange(kh, 'float64'):reshape({ 1, kh, 1, 1 })):reshape({ 1, khkw, 1, 1 })
  local qx = (T.arange(out_w, 'float64') * sx):reshape({ 1, 1, 1, out_w })
  local py = (T.arange(out_h, 'float64') * sy):reshape({ 1, 1, out_h, 1 })
  bx = (bx + tx + qx):astype(dt)
  by = (by + ty + py):astype(dt)

  -- sampler coordinates: -1 .. 1 spans the padded image
  local sx_scale, sy_scale = 2 / (w + 2 * pw - 1), 2 / (h + 2 * ph - 1)
  local parts = F.split_axis(offset, 2, 1)
  local gx = (parts[1] + bx) * sx_scale - 1
  local gy = (parts[2] + by) * sy_scale - 1
  local grid = F.reshape(F.concat({ gx, gy }, 1), { n, 2, khkw, out_h * out_w })

  local xp = x
  if ph > 0 or pw > 0 then xp = F.pad(x, { { 0, 0 }, { 0, 0 }, { ph, ph }, { pw, pw } }, 'constant') end
  local st = F.spatial_transformer_sampler(xp, grid)                      -- (n, c, khkw, oh*ow)
  st = F.reshape(F.transpose(st, { 0, 3, 1, 2 }), { n * out_h * out_w, c * khkw })
  local Wm = F.reshape(F.transpose(W, { 1, 2, 3, 0 }), { c * khkw, out_c })
  local y = F.matmul(st, Wm)
  y = F.transpose(F.reshape(y, { n, out_h, out_w, out_c }), { 0, 3, 1, 2 })
  if b ~= nil then
    y = y + F.broadcast_to(F.reshape(b, { 1, out_c, 1, 1 }), { n, out_c, out_h, out_w })
  end
  return y
end

return M

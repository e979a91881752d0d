-- functions/array/resize_images.lua: F.resize_images(x, output_shape,
-- {mode = 'bilinear', align_corners = true}) for x (B, C, H, W).
--
-- Resizing is separable and linear: y = Ay . x . Ax^T per image, with Ay
-- (out_h, H) and Ax (out_w, W) interpolation matrices (two non-zeros per
-- row for bilinear, one for nearest).  It is composed of two matmuls with
-- constant matrices, so backward and double backward are exact and free;
-- the cost, B*C*(H*W*out_w + out_w*H*out_h) multiply-adds through BLAS, is
-- small next to the convolutions around it, and no kernel is needed.
-- Coordinates follow Chainer 7: align_corners maps the corner pixels onto
-- each other (linspace(0, H-1, out_h)); otherwise pixel centres
-- ((i + 0.5) * H/out_h - 0.5, clamped at 0).  Nearest takes
-- floor(i * H/out_h).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local reshape = require('chainer.functions.array.reshape').reshape
local transpose = require('chainer.functions.array.transpose').transpose

local M = {}

local SIGNATURE = args.signature { 'output_shape', 'mode', 'align_corners' }

-- (out, n) interpolation matrix, transposed to (n, out) for x . A^T
local function interp_t(n, out, mode, align_corners, dtype)
  local m = {}
  for i = 1, n * out do m[i] = 0 end
  local function add(src, dst, w) -- element (src, dst) of the (n, out) matrix
    m[src * out + dst + 1] = m[src * out + dst + 1] + w
  end
  for j = 0, out - 1 do
    if mode == 'nearest' then
      add(math.min(math.floor(j * n / out), n - 1), j, 1)
    else
      local u
      if align_corners then
        u = out > 1 and j * (n - 1) / (out - 1) or 0
      else
        u = math.max((j + 0.5) * n / out - 0.5, 0)
      end
      local u0 = math.floor(u)
      local f = u - u0
      if u0 > n - 1 then u0, f = n - 1, 0 end
      local u1 = math.min(u0 + 1, n - 1)
      add(u0, j, 1 - f)
      add(u1, j, f)
    end
  end
  return T.array(m, dtype):reshape({ n, out })
end
M._interp_t = interp_t

-- F.resize_images(x, output_shape, {mode = 'bilinear', align_corners = true})
function M.resize_images(x, output_shape, opts)
  local v = args.parse('resize_images', SIGNATURE, 2, output_shape, opts)
  local d = args.array('resize_images', 'x', x)
  output_shape = v.output_shape
  local mode = v.mode or 'bilinear'
  local align = v.align_corners
  if align == nil then align = true end
  if d.ptr.nd ~= 4 then error(string.format('resize_images: x must be 4-d (B, C, H, W) (got %d-d)', d.ptr.nd), 2) end
  if d.dtype ~= 'float32' and d.dtype ~= 'float64' then
    error('resize_images: x must be float32 or float64 (got ' .. d.dtype .. ')', 2)
  end
  if mode ~= 'bilinear' and mode ~= 'nearest' then
    error(string.format("resize_images: unknown mode '%s' (expected 'bilinear' or 'nearest')", tostring(mode)), 2)
  end
  if type(output_shape) ~= 'table' or #output_shape ~= 2 then
    error('resize_images: output_shape must be a table {out_h, out_w}', 2)
  end
  local oh, ow = output_shape[1], output_shape[2]
  for _, s in ipairs({ oh, ow }) do
    if type(s) ~= 'number' or s ~= math.floor(s) or s < 1 then
      error('resize_images: output_shape must hold positive integers (got ' .. tostring(s) .. ')', 2)
    end
  end
  local s = d.shape
  local B, C, H, W = s[1], s[2], s[3], s[4]
  if H < 1 or W < 1 then error('resize_images: x has an empty spatial axis', 2) end
  local matmul = require('chainer.functions.math.matmul').matmul
  local ax = interp_t(W, ow, mode, align, d.dtype)
  local ay = interp_t(H, oh, mode, align, d.dtype)
  local y = matmul(reshape(x, { B * C * H, W }), ax)      -- (B*C*H, ow)
  y = transpose(reshape(y, { B * C, H, ow }), { 0, 2, 1 }) -- (B*C, ow, H)
  y = matmul(reshape(y, { B * C * ow, H }), ay)          -- (B*C*ow, oh)
  return transpose(reshape(y, { B, C, ow, oh }), { 0, 1, 3, 2 })
end

return M

-- functions/connection/local_convolution_2d.lua:
-- F.local_convolution_2d(x, W, b, {stride = 1}).
--
-- A convolution whose filter differs at every output position (no weight
-- sharing, no padding): x (N, C, H, W), W (C_out, oh, ow, C, kh, kw),
-- b (C_out, oh, ow) or nil,
--   y[n, o, i, j] = sum_{c,u,v} x[n, c, i*sy+u, j*sx+v] W[o, i, j, c, u, v] + b[o, i, j].
-- Computed as im2col (a C kernel, node Im2ColConv whose backward is the
-- col2im node and vice versa) and one batched matmul over the output
-- positions, so every order of gradient is available.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local U = require 'chainer.functions.connection._util'
local Window = require 'chainer.functions._window'

local C, check, box, wrap, i64 = T.C, T.check, T.box, T.wrap, Window.i64

local M = {}

local ONE2, ZERO2 = { 1, 1 }, { 0, 0 }

-- x (N, C, H, W) -> col (N, C, kh, kw, oh, ow), no padding or dilation.
local Im2ColConv = FunctionNode:extend('Im2ColConv')
M.Im2ColConv = Im2ColConv
local Col2ImConv = FunctionNode:extend('Col2ImConv')
M.Col2ImConv = Col2ImConv

-- Each node's gradient is the other one of the pair, on the same geometry.
local function same_geometry(cls, from)
  local f = setmetatable({}, cls)
  f.ksize, f.stride, f.out_size, f.in_size = from.ksize, from.stride, from.out_size, from.in_size
  return f
end

-- (float16 through float32: U.as32 / U.back_to)
function Im2ColConv:forward(inputs)
  local x32 = U.as32(inputs[1])
  check(C.ch_conv_im2col(x32.ptr, 2, i64(1, self.ksize), i64(2, self.stride), i64(3, ZERO2), i64(4, ONE2),
    i64(5, self.out_size), box), 2)
  return { U.back_to(wrap(box[0]), inputs[1]) }
end

function Im2ColConv:backward(idx, gys) return { same_geometry(Col2ImConv, self):apply({ gys[1] })[1] } end

function Col2ImConv:forward(inputs)
  local col32 = U.as32(inputs[1])
  check(C.ch_conv_col2im(col32.ptr, 2, i64(1, self.stride), i64(2, ZERO2), i64(3, ONE2), i64(4, self.in_size),
    box), 2)
  return { U.back_to(wrap(box[0]), inputs[1]) }
end

function Col2ImConv:backward(idx, gys) return { same_geometry(Im2ColConv, self):apply({ gys[1] })[1] } end

local SIGNATURE = args.signature { 'stride' }

function M.local_convolution_2d(x, W, b, ...)
  local fn = 'local_convolution_2d'
  local opts
  b, opts = U.split_args(fn, b, SIGNATURE, ...)
  local xd, Wd, bd = U.x_W_b(fn, x, W, b)
  if xd.ptr.nd ~= 4 then
    error('local_convolution_2d: x must be 4-d (N, C, H, W), got shape ' .. T.shape_str(xd.shape), 2)
  end
  if Wd.ptr.nd ~= 6 then
    error('local_convolution_2d: W must be 6-d (C_out, oh, ow, C, kh, kw), got shape ' .. T.shape_str(Wd.shape), 2)
  end
  if not T.is_float_dtype(xd.dtype) or Wd.dtype ~= xd.dtype then
    error(string.format('local_convolution_2d: x and W must be floating point of one dtype (got %s and %s)',
      xd.dtype, Wd.dtype), 2)
  end
  local stride = Window.tuple(fn, 'stride', opts.stride, 2, 1, 1, 3)
  local N, Cn, H, Wi = xd.shape[1], xd.shape[2], xd.shape[3], xd.shape[4]
  local O, oh, ow, Wc, kh, kw = unpack(Wd.shape)
  if Wc ~= Cn then
    error(string.format('local_convolution_2d: x has %d channels but W.shape[3] is %d', Cn, Wc), 2)
  end
  local eh = Window.outsize(H, kh, stride[1], 0, false)
  local ew = Window.outsize(Wi, kw, stride[2], 0, false)
  if eh ~= oh or ew ~= ow then
    error(string.format('local_convolution_2d: W is made for a %dx%d output but x gives %dx%d (kernel %dx%d, stride %s)',
      oh, ow, eh, ew, kh, kw, T.shape_str(stride)), 2)
  end
  if bd ~= nil and (bd.ptr.nd ~= 3 or bd.shape[1] ~= O or bd.shape[2] ~= oh or bd.shape[3] ~= ow) then
    error(string.format('local_convolution_2d: b must have shape (%d, %d, %d), got %s', O, oh, ow,
      T.shape_str(bd.shape)), 2)
  end
  local F = {
    transpose = require('chainer.functions.array.transpose').transpose,
    reshape = require('chainer.functions.array.reshape').reshape,
    matmul = require('chainer.functions.math.matmul').matmul,
  }
  local im = setmetatable({}, Im2ColConv)
  im.ksize, im.stride, im.out_size, im.in_size = { kh, kw }, stride, { oh, ow }, { H, Wi }
  local col = im:apply({ x })[1]                                   -- (N, C, kh, kw, oh, ow)
  local P, K = oh * ow, Cn * kh * kw
  col = F.reshape(F.transpose(col, { 4, 5, 0, 1, 2, 3 }), { P, N, K })
  local w = F.reshape(F.transpose(W, { 1, 2, 3, 4, 5, 0 }), { P, K, O })
  local y = F.matmul(col, w)                                       -- (P, N, O)
  y = F.transpose(F.reshape(y, { oh, ow, N, O }), { 2, 3, 0, 1 })  -- (N, O, oh, ow)
  if b ~= nil then
    local bm = require 'chainer.functions.math.basic_math'
    local broadcast_to = require('chainer.functions.array.broadcast_to').broadcast_to
    y = bm.add(y, broadcast_to(F.reshape(b, { 1, O, oh, ow }), { N, O, oh, ow }))
  end
  return y
end

return M

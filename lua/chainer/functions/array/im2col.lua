-- functions/array/im2col.lua: F.im2col(x, ksize, {stride, pad, cover_all,
-- dilate}), Chainer's layout: x (N, C, H, W) -> (N, C*kh*kw, out_h, out_w)
-- where channel c*kh*kw + i*kw + j at (y, x) holds
-- x[c, y*sy - ph + i*dy, x*sx - pw + j*dx] (zero outside the image).
-- Any number of spatial axes works the same way (x (N, C, *spatial)).
--
-- The kernels are the convolution family's ch_conv_im2col/ch_conv_col2im
-- (runtime/cpu/conv.c, shared with convolution_nd).  The gradient is
-- col2im, wrapped in its own node (Col2Im) whose gradient is im2col again,
-- so double backprop works.
local args = require 'chainer._args'
local Window = require 'chainer.functions._window'
local core = require 'chainer.tensor.core'
local FunctionNode = require 'chainer.function_node'

local C, check, wrap, box = core.C, core.check, core.wrap, core.box

local M = {}

local SIGNATURE = args.signature { 'ksize', 'stride', 'pad', 'cover_all', 'dilate' }

local Im2Col = FunctionNode:extend('Im2Col')
local Col2Im = FunctionNode:extend('Col2Im')
M.Im2Col, M.Col2Im = Im2Col, Col2Im

local i64 = Window.i64
local CU = require 'chainer.functions.connection._util'

-- (float16 through float32, as the convolutions: CU.as32 / CU.back_to)
local function im2col_raw(x, g)
  local x32 = CU.as32(x)
  check(C.ch_conv_im2col(x32.ptr, g.nsp, i64(1, g.ksize), i64(2, g.stride), i64(3, g.pad), i64(4, g.dilate), i64(5, g.out), box), 3)
  return CU.back_to(wrap(box[0]), x)
end

local function col2im_raw(col, g)
  local col32 = CU.as32(col)
  check(C.ch_conv_col2im(col32.ptr, g.nsp, i64(1, g.stride), i64(2, g.pad), i64(3, g.dilate), i64(4, g.in_size), box), 3)
  return CU.back_to(wrap(box[0]), col)
end

-- the (N, C*K, *out) view of a (N, C, *k, *out) column tensor and back
local function merged_shape(g, N, Cc)
  local s = { N, Cc * g.kprod }
  for a = 1, g.nsp do s[#s + 1] = g.out[a] end
  return s
end
local function split_shape(g, N, Cc)
  local s = { N, Cc }
  for a = 1, g.nsp do s[#s + 1] = g.ksize[a] end
  for a = 1, g.nsp do s[#s + 1] = g.out[a] end
  return s
end

function Im2Col:forward(inputs)
  local x = inputs[1]
  local g = self.geom
  local col = im2col_raw(x, g)
  return { col:reshape(merged_shape(g, x.shape[1], x.shape[2])) }
end

function Im2Col:backward(_, gys)
  local f = setmetatable({}, Col2Im)
  f.geom = self.geom
  return { f:apply({ gys[1] })[1] }
end

function Col2Im:forward(inputs)
  local gy = inputs[1]
  local g = self.geom
  local s = gy.shape
  local col = gy:reshape(split_shape(g, s[1], s[2] / g.kprod))
  return { col2im_raw(col, g) }
end

function Col2Im:backward(_, ggs)
  local f = setmetatable({}, Im2Col)
  f.geom = self.geom
  return { f:apply({ ggs[1] })[1] }
end

-- Validated geometry for an (N, C, *spatial) input.
function M._geometry(fn, shape, ksize, stride, pad, cover_all, dilate)
  local nsp = #shape - 2
  if nsp < 1 then
    error(string.format('%s: x must be (N, C, *spatial) with at least one spatial axis (got a %d-d input)', fn,
      #shape), 3)
  end
  local g = { nsp = nsp, in_size = {}, out = {}, kprod = 1 }
  g.ksize = Window.tuple(fn, 'ksize', ksize, nsp, nil, nil, 3)
  g.stride = Window.tuple(fn, 'stride', stride, nsp, 1, nil, 3)
  g.pad = Window.tuple(fn, 'pad', pad, nsp, 0, nil, 3)
  g.dilate = Window.tuple(fn, 'dilate', dilate, nsp, 1, nil, 3)
  for a = 1, nsp do
    local k, s, p, d = g.ksize[a], g.stride[a], g.pad[a], g.dilate[a]
    if k < 1 or s < 1 or d < 1 or p < 0 then
      error(string.format('%s: ksize, stride and dilate must be positive and pad non-negative ' ..
        '(axis %d: ksize %d, stride %d, pad %d, dilate %d)', fn, a - 1, k, s, p, d), 3)
    end
    g.in_size[a] = shape[a + 2]
    g.out[a] = Window.outsize(shape[a + 2], k, s, p, cover_all and true or false, d)
    if g.out[a] < 1 then
      error(string.format('%s: the kernel (%d, dilated to %d) does not fit the padded input size %d on ' ..
        'spatial axis %d', fn, k, k + (k - 1) * (d - 1), shape[a + 2] + 2 * p, a - 1), 3)
    end
    g.kprod = g.kprod * k
  end
  return g
end

-- F.im2col(x, ksize, stride = 1, pad = 0, cover_all = false, dilate = 1)
function M.im2col(x, ksize, stride, pad, cover_all, dilate)
  local v = args.parse('im2col', SIGNATURE, 5, ksize, stride, pad, cover_all, dilate)
  local d = args.array('im2col', 'x', x)
  if d.dtype ~= 'float16' and d.dtype ~= 'float32' and d.dtype ~= 'float64' then
    error('im2col: x must be float16, float32 or float64 (got ' .. d.dtype .. ')', 2)
  end
  if v.ksize == nil then error('im2col: ksize is required', 2) end
  local f = setmetatable({}, Im2Col)
  f.geom = M._geometry('im2col', d.shape, v.ksize, v.stride, v.pad, v.cover_all, v.dilate)
  return f:apply({ x })[1]
end

return M

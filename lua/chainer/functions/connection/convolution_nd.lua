-- functions/connection/convolution_nd.lua: N-d convolution and its
-- gradients as FunctionNodes, and the user functions convolution_1d/2d/3d/nd
-- and dilated_convolution_2d.
--
--   F.convolution_2d(x, W, b, {stride = 1, pad = 0, cover_all = false,
--                              dilate = 1, groups = 1})
--
-- x (N, C, *in), W (C_out, C/groups, *k), b (C_out) or nil.  The forward and
-- both gradients are C kernels (runtime/cpu/conv.c: im2col + gemm); float16
-- runs them in float32 and rounds each result once.  The
-- backward is built from nodes that are differentiable again, as in Chainer:
--   gx = deconvolution(gy, W), gW = ConvolutionGradW(x, gy), gb = sum(gy),
-- and ConvolutionGradW's own backward is again a deconvolution and a
-- convolution.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local U = require 'chainer.functions.connection._util'
local Window = require 'chainer.functions._window'

local C, check, box, wrap = T.C, T.check, T.box, T.wrap
local i64 = Window.i64
local as_array = require('chainer.variable').as_array

local M = {}

-- float16 runs the kernels in float32 (U.as32, U.back_to)
local as32, back_to = U.as32, U.back_to

-- Geometry shared by the three nodes of one convolution: a table with nsp,
-- stride, pad, dilate, groups (immutable once made).
local function geometry(nsp, stride, pad, dilate, groups)
  return { nsp = nsp, stride = stride, pad = pad, dilate = dilate, groups = groups }
end
M.geometry = geometry

local function spatial(t, nsp)
  local s = {}
  for i = 1, nsp do s[i] = tonumber(t.ptr.dim[1 + i]) end
  return s
end
M.spatial = spatial

local sum_axes_cache = {}
local function bias_axes(nsp)
  local a = sum_axes_cache[nsp]
  if not a then
    a = { 0 }
    for i = 1, nsp do a[i + 1] = i + 1 end
    sum_axes_cache[nsp] = a
  end
  return a
end
M.bias_axes = bias_axes

---------------------------------------------------------------------------
-- Convolution: (x, W[, b]) -> y with explicit output extents out_size
---------------------------------------------------------------------------
local Convolution = FunctionNode:extend('Convolution')
M.Convolution = Convolution

function Convolution:forward(inputs)
  local x, W, b = inputs[1], inputs[2], inputs[3]
  local g = self.geom
  self:retain_inputs({ 1, 2 })
  local x32, W32, b32 = as32(x), as32(W), as32(b)
  check(C.ch_conv_forward(x32.ptr, W32.ptr, b32 and b32.ptr or nil, g.nsp, i64(1, g.stride), i64(2, g.pad),
    i64(3, g.dilate), i64(4, self.out_size), g.groups, box), 2)
  return { back_to(wrap(box[0]), x) }
end

-- Convolution and Deconvolution are each other's gradient with respect to
-- x: their backward differs only in the functions computing gx (from gy
-- and W) and gW (from x and gy); gb is gy summed over all but the channels.
local function backward_x_W_b(grad_x, grad_W)
  return function(self, idx, gys)
    local xs = self:get_retained_inputs()
    local x, W = xs[1], xs[2]
    local gy = gys[1]
    local ret = {}
    for k = 1, #idx do
      local i = idx[k]
      if i == 1 then
        ret[1] = grad_x(self, gy, W)
      elseif i == 2 then
        ret[2] = grad_W(self, x, gy)
      else
        ret[3] = require('chainer.functions.math.sum').sum(gy, { axis = bias_axes(self.geom.nsp) })
      end
    end
    return ret
  end
end

Convolution.backward = backward_x_W_b(
  function(self, gy, W) return M.deconv_apply(gy, W, nil, self.geom, self.in_size) end,
  function(self, x, gy) return M.grad_w_apply(x, gy, self.geom, self.ksize) end)

-- y = conv(x, W) + b with out_size given (no shape inference).
function M.conv_apply(x, W, b, geom, out_size, in_size, ksize)
  local f = setmetatable({}, Convolution)
  f.geom, f.out_size, f.in_size, f.ksize = geom, out_size, in_size, ksize
  if b ~= nil then return f:apply({ x, W, b })[1] end
  return f:apply({ x, W })[1]
end

---------------------------------------------------------------------------
-- Deconvolution: (x, W[, b]) -> y, the transposed convolution
---------------------------------------------------------------------------
local Deconvolution = FunctionNode:extend('Deconvolution')
M.Deconvolution = Deconvolution

function Deconvolution:forward(inputs)
  local x, W, b = inputs[1], inputs[2], inputs[3]
  local g = self.geom
  self:retain_inputs({ 1, 2 })
  local x32, W32 = as32(x), as32(W)
  check(C.ch_conv_backward_data(x32.ptr, W32.ptr, g.nsp, i64(1, g.stride), i64(2, g.pad), i64(3, g.dilate),
    i64(4, self.out_size), g.groups, box), 2)
  local y = wrap(box[0])
  if b ~= nil then
    local shape = { 1, b.shape[1] }
    for i = 1, g.nsp do shape[i + 2] = 1 end
    T.add(y, as32(b):reshape(shape), y)
  end
  return { back_to(y, x) }
end

Deconvolution.backward = backward_x_W_b(
  function(self, gy, W) return M.conv_apply(gy, W, nil, self.geom, self.in_size, self.out_size, self.ksize) end,
  -- the convolution that maps y back to x has x as its "gy"
  function(self, x, gy) return M.grad_w_apply(gy, x, self.geom, self.ksize) end)

-- y = deconv(x, W) + b with the output extents out_size given.
function M.deconv_apply(x, W, b, geom, out_size)
  local f = setmetatable({}, Deconvolution)
  f.geom, f.out_size = geom, out_size
  f.in_size = spatial(as_array(x), geom.nsp)
  f.ksize = spatial(as_array(W), geom.nsp)
  if b ~= nil then return f:apply({ x, W, b })[1] end
  return f:apply({ x, W })[1]
end

---------------------------------------------------------------------------
-- ConvolutionGradW: (x, gy) -> gW
---------------------------------------------------------------------------
local ConvolutionGradW = FunctionNode:extend('ConvolutionGradW')
M.ConvolutionGradW = ConvolutionGradW

function ConvolutionGradW:forward(inputs)
  local x, gy = inputs[1], inputs[2]
  local g = self.geom
  self:retain_inputs({ 1, 2 })
  local x32, gy32 = as32(x), as32(gy)
  check(C.ch_conv_backward_filter(x32.ptr, gy32.ptr, g.nsp, i64(1, g.stride), i64(2, g.pad), i64(3, g.dilate),
    i64(4, self.ksize), g.groups, box), 2)
  return { back_to(wrap(box[0]), x) }
end

function ConvolutionGradW:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local x, gy = xs[1], xs[2]
  local ggW = gys[1]
  local g = self.geom
  local ret = {}
  for k = 1, #idx do
    if idx[k] == 1 then
      ret[1] = M.deconv_apply(gy, ggW, nil, g, spatial(x.array, g.nsp))
    else
      ret[2] = M.conv_apply(x, ggW, nil, g, spatial(gy.array, g.nsp), spatial(x.array, g.nsp), self.ksize)
    end
  end
  return ret
end

function M.grad_w_apply(x, gy, geom, ksize)
  local f = setmetatable({}, ConvolutionGradW)
  f.geom, f.ksize = geom, ksize
  return f:apply({ x, gy })[1]
end

---------------------------------------------------------------------------
-- user functions
---------------------------------------------------------------------------
-- Chainer: convolution_nd(x, W, b=None, stride=1, pad=0, cover_all=False, *, dilate=1, groups=1)
local CONV_SIGNATURE = args.signature({ 'stride', 'pad', 'cover_all' }, { 'dilate', 'groups' })
local DILATED_SIGNATURE = args.signature { 'stride', 'pad', 'dilate', 'cover_all' }

-- Shared by convolution_1d/2d/3d/nd and dilated_convolution_2d.
-- want_nsp: required number of spatial axes (nil: any >= 1).
local function convolution(fn, want_nsp, x, W, b, opts)
  local xd, Wd, bd, nsp, groups = U.conv_args(fn, want_nsp, x, W, b, opts, 'C_out, C_in/groups, kernel...')
  local cin, cout, wcin = xd.shape[2], Wd.shape[1], Wd.shape[2]
  if cin ~= wcin * groups then
    error(string.format('%s: x has %d input channels but W expects %d (W.shape[1]=%d x groups=%d)', fn, cin,
      wcin * groups, wcin, groups), 3)
  end
  if cout % groups ~= 0 then
    error(string.format('%s: W has %d output channels, not divisible by groups=%d', fn, cout, groups), 3)
  end
  if bd ~= nil then U.check_bias(fn, bd, xd, cout, 'to match W') end
  local stride, pad, dilate = U.window_tuples(fn, opts, nsp)
  local cover_all = opts.cover_all and true or false
  local in_size, ksize, out_size = spatial(xd, nsp), spatial(Wd, nsp), {}
  for i = 1, nsp do
    local o = Window.outsize(in_size[i], ksize[i], stride[i], pad[i], cover_all, dilate[i])
    if o <= 0 then
      error(string.format('%s: the output would be empty on spatial axis %d (input %d, kernel %d, stride %d, pad %d, dilate %d)',
        fn, i - 1, in_size[i], ksize[i], stride[i], pad[i], dilate[i]), 3)
    end
    out_size[i] = o
  end
  local geom = geometry(nsp, stride, pad, dilate, groups)
  return M.conv_apply(x, W, b, geom, out_size, in_size, ksize)
end
M._convolution = convolution

M.convolution_nd = U.front_door('convolution_nd', nil, CONV_SIGNATURE, convolution)
M.convolution_1d = U.front_door('convolution_1d', 1, CONV_SIGNATURE, convolution)
-- (accepts Chainer's experimental channel-last memory layouts for x and W)
M.convolution_2d = require('chainer.memory_layouts').accept_channel_last('convolution_2d',
  U.front_door('convolution_2d', 2, CONV_SIGNATURE, convolution), true)
M.convolution_3d = U.front_door('convolution_3d', 3, CONV_SIGNATURE, convolution)
-- Chainer: dilated_convolution_2d(x, W, b=None, stride=1, pad=0, dilate=1, cover_all=False)
M.dilated_convolution_2d = U.front_door('dilated_convolution_2d', 2, DILATED_SIGNATURE, convolution)

return M

-- functions/connection/deconvolution_nd.lua: the transposed convolution,
-- deconvolution_1d/2d/3d/nd.
--
--   F.deconvolution_2d(x, W, b, {stride = 1, pad = 0, outsize = nil,
--                                dilate = 1, groups = 1})
--
-- x (N, C_in, *in), W (C_in, C_out/groups, *k), b (C_out) or nil.  It is the
-- gradient of a convolution with respect to its input: the forward is the
-- convolution's data-gradient kernel, the backward a convolution and a
-- filter gradient (see convolution_nd.lua), so it is differentiable again.
local args = require 'chainer._args'
local U = require 'chainer.functions.connection._util'
local Window = require 'chainer.functions._window'
local conv = require 'chainer.functions.connection.convolution_nd'

local M = {}
M.Deconvolution = conv.Deconvolution

-- Chainer: deconvolution_nd(x, W, b=None, stride=1, pad=0, outsize=None, *, dilate=1, groups=1)
local SIGNATURE = args.signature({ 'stride', 'pad', 'outsize' }, { 'dilate', 'groups' })

local function deconvolution(fn, want_nsp, x, W, b, opts)
  local xd, Wd, bd, nsp, groups = U.conv_args(fn, want_nsp, x, W, b, opts, 'C_in, C_out/groups, kernel...')
  local cin = xd.shape[2]
  if cin ~= Wd.shape[1] then
    error(string.format('%s: x has %d input channels but W.shape[0] is %d', fn, cin, Wd.shape[1]), 3)
  end
  if cin % groups ~= 0 then
    error(string.format('%s: x has %d channels, not divisible by groups=%d', fn, cin, groups), 3)
  end
  local cout = Wd.shape[2] * groups
  if bd ~= nil then U.check_bias(fn, bd, xd, cout, '(W.shape[1] x groups)') end
  local stride, pad, dilate = U.window_tuples(fn, opts, nsp)
  local in_size, ksize = conv.spatial(xd, nsp), conv.spatial(Wd, nsp)
  local out_size
  if opts.outsize then
    out_size = Window.tuple(fn, 'outsize', opts.outsize, nsp, nil, 1, 3)
    for i = 1, nsp do
      local a = Window.outsize(out_size[i], ksize[i], stride[i], pad[i], false, dilate[i])
      local c = Window.outsize(out_size[i], ksize[i], stride[i], pad[i], true, dilate[i])
      if a ~= in_size[i] and c ~= in_size[i] then
        error(string.format('%s: outsize %d on spatial axis %d does not fit: a convolution of it gives %d, but x has %d',
          fn, out_size[i], i - 1, a, in_size[i]), 3)
      end
    end
  else
    out_size = {}
    for i = 1, nsp do
      local o = Window.deconv_outsize(in_size[i], ksize[i], stride[i], pad[i], false, dilate[i])
      if o <= 0 then
        error(string.format('%s: the output would be empty on spatial axis %d (input %d, kernel %d, stride %d, pad %d)',
          fn, i - 1, in_size[i], ksize[i], stride[i], pad[i]), 3)
      end
      out_size[i] = o
    end
  end
  local geom = conv.geometry(nsp, stride, pad, dilate, groups)
  return conv.deconv_apply(x, W, b, geom, out_size)
end

M.deconvolution_nd = U.front_door('deconvolution_nd', nil, SIGNATURE, deconvolution)
M.deconvolution_1d = U.front_door('deconvolution_1d', 1, SIGNATURE, deconvolution)
-- (accepts Chainer's experimental channel-last memory layouts for x and W)
M.deconvolution_2d = require('chainer.memory_layouts').accept_channel_last('deconvolution_2d',
  U.front_door('deconvolution_2d', 2, SIGNATURE, deconvolution), true)
M.deconvolution_3d = U.front_door('deconvolution_3d', 3, SIGNATURE, deconvolution)

return M

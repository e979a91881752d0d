-- functions/connection/depthwise_convolution_2d.lua:
-- F.depthwise_convolution_2d(x, W, b, {stride = 1, pad = 0}).
--
-- x (N, C, H, W), W (M, C, kh, kw) with channel multiplier M, b (C*M).
-- Output channel c*M + m filters input channel c with W[m, c]: that is a
-- grouped convolution with groups = C and weights W transposed to
-- (C, M, kh, kw) and reshaped to (C*M, 1, kh, kw), which is how it is
-- computed (so its gradients are the convolution's).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local U = require 'chainer.functions.connection._util'
local conv = require 'chainer.functions.connection.convolution_nd'

local M = {}

local SIGNATURE = args.signature { 'stride', 'pad' }
local AXES = { 1, 0, 2, 3 }

function M.depthwise_convolution_2d(x, W, b, ...)
  local fn = 'depthwise_convolution_2d'
  local opts
  b, opts = U.split_args(fn, b, SIGNATURE, ...)
  local xd, Wd = U.x_W_b(fn, x, W, nil)   -- b is checked by the convolution
  if xd.ptr.nd ~= 4 then
    error('depthwise_convolution_2d: x must be 4-d (N, C, H, W), got shape ' .. T.shape_str(xd.shape), 2)
  end
  if Wd.ptr.nd ~= 4 then
    error('depthwise_convolution_2d: W must be 4-d (multiplier, C, kh, kw), got shape ' .. T.shape_str(Wd.shape), 2)
  end
  local mult, c, kh, kw = Wd.shape[1], Wd.shape[2], Wd.shape[3], Wd.shape[4]
  if xd.shape[2] ~= c then
    error(string.format('depthwise_convolution_2d: x has %d channels but W.shape[1] is %d', xd.shape[2], c), 2)
  end
  local transpose = require('chainer.functions.array.transpose').transpose
  local reshape = require('chainer.functions.array.reshape').reshape
  local Wc = reshape(transpose(W, AXES), { c * mult, 1, kh, kw })
  return conv._convolution(fn, 2, x, Wc, b, { stride = opts.stride, pad = opts.pad, groups = c })
end

return M

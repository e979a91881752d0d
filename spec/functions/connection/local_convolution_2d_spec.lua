-- Specs for F.local_convolution_2d (per-position filters) against a naive
-- reference, gradients, errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = dofile('spec/functions/connection/conv_reference.lua')

local rnd = require('helpers').uniform

local function ref(x, W, b, s)
  local xv, wv, bv = x:totable(), W:totable(), b and b:totable()
  local N, C = x.shape[1], x.shape[2]
  local O, oh, ow, _, kh, kw = unpack(W.shape)
  local y = {}
  for n = 1, N do
    y[n] = {}
    for o = 1, O do
      y[n][o] = {}
      for i = 1, oh do
        y[n][o][i] = {}
        for j = 1, ow do
          local acc = bv and bv[o][i][j] or 0
          for c = 1, C do for u = 1, kh do for v = 1, kw do
            acc = acc + xv[n][c][(i - 1) * s + u][(j - 1) * s + v] * wv[o][i][j][c][u][v]
          end end end
          y[n][o][i][j] = acc
        end
      end
    end
  end
  return T.array(y, x.dtype)
end

function_spec.describe('F.local_convolution_2d', {
  fn = function(x, W, b) return F.local_convolution_2d(x, W, b, { stride = 2 }) end,
  inputs = function(dt) return { rnd({ 2, 2, 5, 5 })(dt), rnd({ 3, 2, 2, 2, 3, 3 })(dt), rnd({ 3, 2, 2 })(dt) } end,
  reference = function(x, W, b) return ref(x, W, b, 2) end,
  backward_tol = { float32 = { atol = 5e-4, rtol = 5e-3 }, float64 = { atol = 1e-6, rtol = 1e-5 } },
})

function_spec.describe('F.local_convolution_2d nobias', {
  fn = function(x, W) return F.local_convolution_2d(x, W) end,
  inputs = function(dt) return { rnd({ 1, 2, 3, 3 })(dt), rnd({ 2, 2, 2, 2, 2, 2 })(dt) } end,
  reference = function(x, W) return ref(x, W, nil, 1) end,
  double_backward = true,
  dtypes = { 'float16', 'float32', 'float64' },   -- float16 runs im2col/col2im in float32
})

describe('F.local_convolution_2d', function()
  it('rejects bad inputs with clear messages', function()
    R.errors_with(function() F.local_convolution_2d(T.ones({ 1, 2, 4, 4 }), T.ones({ 1, 2, 2, 2, 2, 2 })) end,
      'local_convolution_2d', 'output')
    R.errors_with(function() F.local_convolution_2d(T.ones({ 1, 3, 4, 4 }), T.ones({ 1, 3, 3, 2, 2, 2 })) end,
      'local_convolution_2d', 'channels')
    R.errors_with(function() F.local_convolution_2d(T.ones({ 1, 2, 4, 4 }), T.ones({ 1, 3, 3, 2, 2 })) end,
      'local_convolution_2d', 'W must be 6-d')
  end)
end)

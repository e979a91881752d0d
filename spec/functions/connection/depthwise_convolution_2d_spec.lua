-- Specs for F.depthwise_convolution_2d: output channel c*M + m filters
-- input channel c with W[m, c] (checked against a direct per-channel
-- reference), gradients, errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = dofile('spec/functions/connection/conv_reference.lua')

local rnd = require('helpers').uniform

-- per channel: y[:, c*M+m] = conv(x[:, c], W[m, c]) + b[c*M+m]
local function ref(x, W, b, opts)
  local M, Cn = W.shape[1], W.shape[2]
  local parts = {}
  for c = 0, Cn - 1 do
    for m = 0, M - 1 do
      local xc = x:slice({ 0, x.shape[1] }, { c, c + 1 }):copy()
      local wc = W:slice({ m, m + 1 }, { c, c + 1 }):copy()
      local bc = b and b:slice({ c * M + m, c * M + m + 1 }):copy()
      parts[#parts + 1] = R.conv(xc, wc, bc, opts)
    end
  end
  return T.concatenate(parts, 1)
end

function_spec.describe('F.depthwise_convolution_2d', {
  fn = function(x, W, b) return F.depthwise_convolution_2d(x, W, b, { pad = 1 }) end,
  inputs = function(dt) return { rnd({ 1, 2, 3, 3 })(dt), rnd({ 2, 2, 2, 2 })(dt), rnd({ 4 })(dt) } end,
  reference = function(x, W, b) return ref(x, W, b, { pad = 1 }) end,
  double_backward = true,
  backward_tol = { float32 = { atol = 5e-4, rtol = 5e-3 }, float64 = { atol = 1e-6, rtol = 1e-5 } },
})

describe('F.depthwise_convolution_2d', function()
  it('takes Chainer positional stride and pad', function()
    T.random.seed(11)
    local x = T.random.uniform(-1, 1, { 1, 2, 5, 5 }, 'float64')
    local W = T.random.uniform(-1, 1, { 1, 2, 2, 2 }, 'float64')
    local y = F.depthwise_convolution_2d(x, W, nil, 2, 1)
    chainer.testing.assert_allclose(y.array, ref(x, W, nil, { stride = 2, pad = 1 }), { atol = 1e-12 })
  end)

  it('rejects bad inputs with clear messages', function()
    R.errors_with(function() F.depthwise_convolution_2d(T.ones({ 1, 3, 4, 4 }), T.ones({ 2, 2, 3, 3 })) end,
      'depthwise_convolution_2d', 'W.shape[1] is 2')
    R.errors_with(function() F.depthwise_convolution_2d(T.ones({ 3, 4, 4 }), T.ones({ 2, 3, 3, 3 })) end,
      'depthwise_convolution_2d', 'x must be 4-d')
  end)
end)

-- Specs for F.convolution_1d / convolution_3d / convolution_nd and
-- F.dilated_convolution_2d against the naive reference.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = dofile('spec/functions/connection/conv_reference.lua')

local tol = R.tol

local rnd = require('helpers').uniform

function_spec.describe('F.convolution_1d', {
  fn = function(x, W, b) return F.convolution_1d(x, W, b, { stride = 2, pad = 1 }) end,
  inputs = function(dt) return { rnd({ 2, 3, 9 })(dt), rnd({ 4, 3, 3 })(dt), rnd({ 4 })(dt) } end,
  reference = function(x, W, b) return R.conv(x, W, b, { stride = 2, pad = 1 }) end,
  double_backward = true,
  backward_tol = tol,
})

function_spec.describe('F.convolution_3d', {
  fn = function(x, W, b) return F.convolution_3d(x, W, b, { pad = { 1, 0, 1 }, stride = { 1, 2, 1 } }) end,
  inputs = function(dt) return { rnd({ 1, 2, 3, 4, 3 })(dt), rnd({ 2, 2, 2, 2, 2 })(dt), rnd({ 2 })(dt) } end,
  reference = function(x, W, b) return R.conv(x, W, b, { pad = { 1, 0, 1 }, stride = { 1, 2, 1 } }) end,
  backward_tol = tol,
})

function_spec.describe('F.convolution_nd (1-d, dilate, groups, cover_all)', {
  fn = function(x, W) return F.convolution_nd(x, W, nil, { stride = 2, dilate = 2, groups = 2, cover_all = true }) end,
  inputs = function(dt) return { rnd({ 2, 4, 8 })(dt), rnd({ 4, 2, 2 })(dt) } end,
  reference = function(x, W) return R.conv(x, W, nil, { stride = 2, dilate = 2, groups = 2, cover_all = true }) end,
  backward_tol = tol,
})

function_spec.describe('F.dilated_convolution_2d', {
  fn = function(x, W, b) return F.dilated_convolution_2d(x, W, b, { pad = 1, dilate = 2 }) end,
  inputs = function(dt) return { rnd({ 2, 2, 5, 5 })(dt), rnd({ 3, 2, 3, 3 })(dt), rnd({ 3 })(dt) } end,
  reference = function(x, W, b) return R.conv(x, W, b, { pad = 1, dilate = 2 }) end,
  backward_tol = tol,
})

describe('F.convolution_nd', function()
  it('works on 4 spatial axes', function()
    T.random.seed(5)
    local x = T.random.uniform(-1, 1, { 1, 2, 3, 3, 2, 3 }, 'float64')
    local W = T.random.uniform(-1, 1, { 2, 2, 2, 1, 2, 2 }, 'float64')
    local y = F.convolution_nd(x, W, nil, { pad = { 0, 1, 0, 1 } })
    chainer.testing.assert_allclose(y.array, R.conv(x, W, nil, { pad = { 0, 1, 0, 1 } }), { atol = 1e-12 })
  end)

  it('dilated_convolution_2d takes Chainer positional stride, pad, dilate', function()
    T.random.seed(6)
    local x = T.random.uniform(-1, 1, { 1, 1, 7, 7 }, 'float64')
    local W = T.random.uniform(-1, 1, { 1, 1, 3, 3 }, 'float64')
    local y = F.dilated_convolution_2d(x, W, nil, 1, 1, 2)
    chainer.testing.assert_allclose(y.array, R.conv(x, W, nil, { pad = 1, dilate = 2 }), { atol = 1e-12 })
  end)

  it('checks the number of spatial axes and tuple lengths', function()
    R.errors_with(function() F.convolution_1d(T.ones({ 1, 1, 3, 3 }), T.ones({ 1, 1, 2, 2 })) end,
      'convolution_1d', 'x must be 3-d')
    R.errors_with(function() F.convolution_3d(T.ones({ 1, 1, 3, 3 }), T.ones({ 1, 1, 2, 2 })) end,
      'convolution_3d', 'x must be 5-d')
    R.errors_with(function() F.convolution_nd(T.ones({ 1, 1, 3, 3 }), T.ones({ 1, 1, 2 })) end,
      'convolution_nd', 'W must be 4-d')
    R.errors_with(function() F.convolution_nd(T.ones({ 1, 1, 3, 3 }), T.ones({ 1, 1, 2, 2 }), nil, { pad = { 1, 1, 1 } }) end,
      'convolution_nd', 'pad')
    R.errors_with(function() F.convolution_nd(T.ones({ 1, 3 }), T.ones({ 1, 3 })) end,
      'convolution_nd', 'spatial axis')
  end)
end)

-- Specs for F.deconvolution_1d/2d/3d/nd: forward against the naive
-- transposed convolution (conv_reference.lua), backward and double backward
-- by finite differences, outsize, groups, dilate, and errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = dofile('spec/functions/connection/conv_reference.lua')

local tol = R.tol
local rnd = require('helpers').uniform

local cases = {
  { name = 'default', opts = {}, shapes = { { 2, 2, 3, 3 }, { 2, 3, 2, 2 }, { 3 } }, double = true },
  { name = 'stride2 pad1', opts = { stride = 2, pad = 1 }, shapes = { { 1, 2, 3, 3 }, { 2, 2, 3, 3 }, { 2 } } },
  { name = 'outsize', opts = { stride = 2, pad = 1, outsize = { 6, 6 } }, shapes = { { 1, 2, 3, 3 }, { 2, 2, 3, 3 }, { 2 } } },
  { name = 'groups dilate', opts = { groups = 2, dilate = 2 }, shapes = { { 1, 4, 3, 2 }, { 4, 1, 2, 2 } } },
  { name = 'stride3 nobias', opts = { stride = 3 }, shapes = { { 1, 2, 2, 2 }, { 2, 3, 2, 2 } } },
}

for _, case in ipairs(cases) do
  function_spec.describe('F.deconvolution_2d ' .. case.name, {
    fn = function(x, W, b) return F.deconvolution_2d(x, W, b, case.opts) end,
    inputs = function(dt)
      local xs = {}
      for i, s in ipairs(case.shapes) do xs[i] = rnd(s)(dt) end
      return xs
    end,
    reference = function(x, W, b) return R.deconv(x, W, b, case.opts) end,
    double_backward = case.double,
    backward_tol = tol,
  })
end

function_spec.describe('F.deconvolution_1d', {
  fn = function(x, W, b) return F.deconvolution_1d(x, W, b, { stride = 2 }) end,
  inputs = function(dt) return { rnd({ 2, 2, 4 })(dt), rnd({ 2, 3, 3 })(dt), rnd({ 3 })(dt) } end,
  reference = function(x, W, b) return R.deconv(x, W, b, { stride = 2 }) end,
  backward_tol = tol,
})

function_spec.describe('F.deconvolution_3d', {
  fn = function(x, W) return F.deconvolution_3d(x, W, nil, { pad = 1 }) end,
  inputs = function(dt) return { rnd({ 1, 2, 2, 3, 2 })(dt), rnd({ 2, 1, 3, 2, 3 })(dt) } end,
  reference = function(x, W) return R.deconv(x, W, nil, { pad = 1 }) end,
  backward_tol = tol,
})

describe('F.deconvolution_2d', function()
  it('is the adjoint of convolution_2d: <conv(x), y> = <x, deconv(y)>', function()
    T.random.seed(7)
    local x = T.random.uniform(-1, 1, { 2, 3, 7, 7 }, 'float64')
    local W = T.random.uniform(-1, 1, { 4, 3, 3, 3 }, 'float64')
    local y = T.random.uniform(-1, 1, { 2, 4, 3, 3 }, 'float64')
    local cx = F.convolution_2d(x, W, nil, { stride = 3, pad = 1, cover_all = true }).array
    local dy = F.deconvolution_2d(y, W, nil, { stride = 3, pad = 1, outsize = { 7, 7 } }).array
    local a = T.sum(cx * y):item()
    local b = T.sum(x * dy):item()
    assert.is_true(math.abs(a - b) < 1e-10 * (1 + math.abs(a)))
  end)

  it('infers the output size as Chainer does', function()
    local y = F.deconvolution_2d(T.ones({ 1, 1, 4, 4 }), T.ones({ 1, 1, 3, 3 }), nil, { stride = 2, pad = 1 })
    assert.same({ 1, 1, 7, 7 }, y.shape)
  end)

  it('rejects bad inputs with clear messages', function()
    local x = T.ones({ 1, 2, 3, 3 })
    R.errors_with(function() F.deconvolution_2d(x, T.ones({ 3, 2, 2, 2 })) end, 'deconvolution_2d', 'W.shape[0]')
    R.errors_with(function() F.deconvolution_2d(x, T.ones({ 2, 2, 2, 2 }), nil, { outsize = { 9, 9 } }) end,
      'deconvolution_2d', 'outsize')
    R.errors_with(function() F.deconvolution_2d(x, T.ones({ 2, 2, 2, 2 }), T.ones({ 3 })) end,
      'deconvolution_2d', 'b must have shape (2,)')
    R.errors_with(function() F.deconvolution_2d(T.ones({ 2, 3, 3 }), T.ones({ 2, 2, 2, 2 })) end,
      'deconvolution_2d', 'x must be 4-d')
    R.errors_with(function() F.deconvolution_2d(x, T.ones({ 2, 2, 2, 2 }), nil, { groups = 4 }) end,
      'deconvolution_2d', 'groups')
  end)
end)

-- L.DeformableConvolution2D: an offset convolution (2 kh kw channels)
-- feeding F.deformable_convolution_2d_sampler; forward and backward equal
-- the composed functions with the link's parameters.
local chainer = require 'chainer'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions

local close = require('helpers').close
local check_same_as_function = require('links._support').check_same_as_function

describe('L.DeformableConvolution2D', function()
  local function make(opts)
    T.random.seed(5)
    return chainer.using_config('dtype', 'float64', function()
      return L.DeformableConvolution2D(2, 3, 3, 1, 1, opts)
    end)
  end
  it('holds an offset convolution and the deformable weights, with Chainer shapes', function()
    local l = make()
    assert.are.same({ 18, 2, 3, 3 }, l.offset_conv.W.shape)
    assert.are.same({ 18 }, l.offset_conv.b.shape)
    assert.are.same({ 3, 2, 3, 3 }, l.deform_conv.W.shape)
    assert.are.same({ 3 }, l.deform_conv.b.shape)
  end)
  it('forward and backward equal convolution_2d + deformable_convolution_2d_sampler', function()
    local l = make({ offset_initialW = chainer.initializers.Normal(0.3), deform_initial_bias = 0.2 })
    local x = T.random.uniform(-1, 1, { 2, 2, 5, 4 }, 'float64')
    local y = check_same_as_function({
      link = l, x = x, tol = 1e-12, grad_tol = 1e-10,
      params = { l.offset_conv.W, l.offset_conv.b, l.deform_conv.W, l.deform_conv.b },
      fn = function(xv, oW, ob, dW, db)
        local offset = F.convolution_2d(xv, oW, ob, { stride = 1, pad = 1 })
        return F.deformable_convolution_2d_sampler(xv, offset, dW, db, { stride = 1, pad = 1 })
      end,
    })
    assert.are.same({ 2, 3, 5, 4 }, y.shape)
  end)
  it('with zero offset weights it is an ordinary convolution', function()
    local l = make({ offset_initialW = 0, offset_initial_bias = 0 })
    local x = T.random.uniform(-1, 1, { 1, 2, 4, 4 }, 'float64')
    close(l(x), F.convolution_2d(x, l.deform_conv.W.array, l.deform_conv.b.array, { pad = 1 }), 1e-12)
  end)
  it('honours nobias options and infers in_channels lazily', function()
    local l = L.DeformableConvolution2D(nil, 2, 2, { offset_nobias = true, deform_nobias = true })
    assert.is_nil(l.offset_conv.b)
    assert.is_nil(l.deform_conv.b)
    local y = l(T.ones({ 1, 3, 4, 4 }))
    assert.are.same({ 2, 3, 2, 2 }, l.deform_conv.W.shape)
    assert.are.same({ 1, 2, 3, 3 }, y.shape)
  end)
end)

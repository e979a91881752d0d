-- L.LocalConvolution2D: parameters shaped as Chainer's, forward and
-- backward equal to F.local_convolution_2d with the link's parameters.
local chainer = require 'chainer'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions

local check_same_as_function = require('links._support').check_same_as_function

describe('L.LocalConvolution2D', function()
  it('has W (out_c, out_h, out_w, in_c, kh, kw) and b (out_c, out_h, out_w), as Chainer', function()
    local l = L.LocalConvolution2D(3, 4, { 6, 5 }, { 3, 2 }, 1)
    assert.are.same({ 4, 4, 4, 3, 3, 2 }, l.W.shape)
    assert.are.same({ 4, 4, 4 }, l.b.shape)
    local l2 = L.LocalConvolution2D(3, 4, { 7, 7 }, 3, 2, true)
    assert.are.same({ 4, 3, 3, 3, 3, 3 }, l2.W.shape)
    assert.is_nil(l2.b)
  end)
  it('forward and backward equal F.local_convolution_2d with its parameters', function()
    T.random.seed(3)
    local l = chainer.using_config('dtype', 'float64', function()
      return L.LocalConvolution2D(2, 3, { 5, 4 }, 2, 1, { initial_bias = 0.5 })
    end)
    local x = T.random.uniform(-1, 1, { 2, 2, 5, 4 }, 'float64')
    local y = check_same_as_function({
      link = l, x = x, params = { l.W, l.b }, tol = 1e-12,
      fn = function(xv, W, b) return F.local_convolution_2d(xv, W, b, 1) end,
    })
    -- one output by hand: y[0, o, 0, 0] = sum W[o, 0, 0] * x[0, :, 0:2, 0:2] + b[o, 0, 0]
    local W, b = l.W.array, l.b.array
    local o = 1
    local acc = b:totable()[o + 1][1][1]
    local Wt, xt = W:totable(), x:totable()
    for c = 1, 2 do for i = 1, 2 do for j = 1, 2 do
      acc = acc + Wt[o + 1][1][1][c][i][j] * xt[1][c][i][j]
    end end end
    assert.is_true(math.abs(acc - y.array:totable()[1][o + 1][1][1]) < 1e-12)
  end)
  it('infers in_channels and in_size at the first call', function()
    local l = L.LocalConvolution2D(nil, 2, nil, 3)
    local y = l(T.ones({ 1, 3, 5, 6 }))
    assert.are.same({ 2, 3, 4, 3, 3, 3 }, l.W.shape)
    assert.are.same({ 1, 2, 3, 4 }, y.shape)
  end)
end)

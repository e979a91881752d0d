-- initializers.UpsamplingDeconvFilter / DownsamplingConvFilter
local chainer = require 'chainer'
local T = chainer.tensor
local I = chainer.initializers
local L = chainer.links

describe('initializers.UpsamplingDeconvFilter / DownsamplingConvFilter', function()
  it('upsampling: the bilinear kernel on the (i, i) channel pairs, zeros elsewhere', function()
    local a = T.empty({ 2, 2, 4, 4 }, 'float64')
    I.UpsamplingDeconvFilter()(a)
    -- k = 4: factor 2, centre 1.5, per axis {0.25, 0.75, 0.75, 0.25}
    local axis = { 0.25, 0.75, 0.75, 0.25 }
    local t = a:totable()
    for i = 1, 4 do
      for j = 1, 4 do
        assert.are.equal(axis[i] * axis[j], t[1][1][i][j])
        assert.are.equal(axis[i] * axis[j], t[2][2][i][j])
        assert.are.equal(0, t[1][2][i][j])
        assert.are.equal(0, t[2][1][i][j])
      end
    end
  end)

  it('downsampling: the kernel divided by its sum; out_c = 1 fills channel 0 of each input', function()
    local a = T.empty({ 3, 1, 3 }, 'float32')
    I.DownsamplingConvFilter()(a)
    -- k = 3: factor 2, centre 1, {0.5, 1, 0.5} / 2
    assert.are.same({ { { 0.25, 0.5, 0.25 } }, { { 0.25, 0.5, 0.25 } }, { { 0.25, 0.5, 0.25 } } }, a:totable())
    local b = T.empty({ 1, 1, 3, 3, 3 }, 'float64')
    I.DownsamplingConvFilter('linear', 'float64')(b)
    assert.is_true(math.abs(b:sum():item() - 1) < 1e-12)
  end)

  it('makes a stride-2 deconvolution a bilinear upsampling of a constant image', function()
    local l = chainer.using_config('dtype', 'float64', function()
      return L.Deconvolution2D(1, 1, 4, 2, 1, { nobias = true, initialW = I.UpsamplingDeconvFilter() })
    end)
    local y = l(T.ones({ 1, 1, 3, 3 }, 'float64'))
    assert.are.same({ 1, 1, 6, 6 }, y.shape)
    -- away from the border every output cell sums to 1
    local t = y.array:totable()
    for i = 2, 5 do for j = 2, 5 do assert.is_true(math.abs(t[1][1][i][j] - 1) < 1e-12) end end
  end)

  it('rejects unsupported interpolation and shapes with the initializer name', function()
    assert.has_error(function() I.UpsamplingDeconvFilter('nearest') end,
      "UpsamplingDeconvFilter: unsupported interpolation method 'nearest' (only 'linear')")
    assert.has_error(function() I.DownsamplingConvFilter()(T.empty({ 2, 3, 3, 3 })) end,
      'DownsamplingConvFilter: out_c (shape[2] = 3) must equal in_c (shape[1] = 2) or be 1')
    assert.has_error(function() I.DownsamplingConvFilter()(T.empty({ 2, 2, 3, 4 })) end,
      'DownsamplingConvFilter: the spatial sizes must all be equal, got shape (2, 2, 3, 4)')
    assert.has_error(function() I.UpsamplingDeconvFilter()(T.empty({ 2, 2 })) end,
      'UpsamplingDeconvFilter: the array must be (in_c, out_c, k, ...) with at least one spatial axis, got shape (2, 2)')
    assert.has_error(function() I.UpsamplingDeconvFilter(nil, 'float64')(T.empty({ 1, 1, 2 }, 'float32')) end,
      'UpsamplingDeconvFilter: the array is float32 but this initializer makes float64')
  end)
end)

-- F.roi_max_pooling_2d, F.roi_average_pooling_2d and F.roi_max_align_2d
-- (Chainer 7's ROI functions with rois (R, 4) + roi_indices (R)).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = require 'functions.pooling._ref'
local RR = require 'functions.pooling._roi_ref'

-- ROIs (y_min, x_min, y_max, x_max) on a 7 x 6 image: one inside, one
-- with fractional corners, one degenerate, one reaching past the border,
-- every bin of each still touching the image (so no -inf output).
local ROIS = { { 0, 0, 3, 3 }, { 1.2, 2, 6.4, 5 }, { 2, 2, 2, 2 }, { -2, -1, 4, 8 } }
local IDX = { 0, 1, 0, 1 }
local function rois() return T.array(ROIS, 'float32') end
local function idx() return T.array(IDX, 'int32') end

local pair = RR.pair
local function ref_pool(x, outh, outw, scale, op)
  return RR.pool(x, rois():totable(), IDX, outh, outw, scale, 0, op, -math.huge)
end
local function ref_max_align(x, outh, outw, scale, sr)
  return RR.align(x, rois():totable(), IDX, outh, outw, scale, sr, 'max')
end

local CASES = {
  { name = '2x2 scale 1', opts = { outsize = 2, scale = 1.0 } },
  { name = '2x3 scale 0.5', opts = { outsize = { 2, 3 }, scale = 0.5 } },
  { name = '1x4 scale 1', opts = { outsize = { 1, 4 }, scale = 1.0 } },
}

function_spec.describe('F.roi_max_pooling_2d', {
  fn = function(x, o) return F.roi_max_pooling_2d(x, rois(), idx(), o.outsize, o.scale) end,
  inputs = function(dt) return { R.distinct({ 2, 3, 7, 6 }, dt) } end,
  reference = function(x, o)
    local oh, ow = pair(o.outsize)
    return ref_pool(x, oh, ow, o.scale, 'max')
  end,
  double_backward = true,
  cases = CASES,
})

function_spec.describe('F.roi_average_pooling_2d', {
  fn = function(x, o)
    return F.roi_average_pooling_2d(x, rois(), idx(), { outsize = o.outsize, spatial_scale = o.scale })
  end,
  inputs = function(dt) return { T.random.uniform(-1, 1, { 2, 3, 7, 6 }, dt) } end,
  reference = function(x, o)
    local oh, ow = pair(o.outsize)
    return ref_pool(x, oh, ow, o.scale, 'mean')
  end,
  double_backward = true,
  cases = CASES,
})

function_spec.describe('F.roi_max_align_2d', {
  fn = function(x, o)
    return F.roi_max_align_2d(x, rois(), idx(), o.outsize, o.scale, { sampling_ratio = o.sampling_ratio })
  end,
  inputs = function(dt) return { T.random.uniform(-1, 1, { 2, 2, 7, 6 }, dt) } end,
  reference = function(x, o)
    local oh, ow = pair(o.outsize)
    return ref_max_align(x, oh, ow, o.scale, o.sampling_ratio)
  end,
  double_backward = true,
  cases = RR.ALIGN_CASES,
})

describe('F.roi_max_pooling_2d / F.roi_average_pooling_2d', function()
  it('span max(end - start, 1) cells, without roi_pooling_2d\'s +1', function()
    local x = T.arange(30, 'float64'):reshape({ 1, 1, 6, 5 })
    local r = T.array({ { 0, 0, 2, 2 } }, 'float64')
    local i = T.array({ 0 }, 'int32')
    -- cells rows 0-1, columns 0-1: 0, 1, 5, 6
    assert.are.same({ { { { 6 } } } }, F.roi_max_pooling_2d(x, r, i, 1, 1.0).array:totable())
    assert.are.same({ { { { 3 } } } }, F.roi_average_pooling_2d(x, r, i, 1, 1.0).array:totable())
  end)

  it('give -inf (max) and 0 (average) for a bin outside the image, with no gradient there', function()
    local x = chainer.Variable(T.ones({ 1, 1, 4, 4 }, 'float64'))
    local r = T.array({ { 2, 2, 10, 10 } }, 'float64')   -- bins 4..9 lie outside
    local i = T.array({ 0 }, 'int32')
    local ym = F.roi_max_pooling_2d(x, r, i, 2, 1.0)
    local ya = F.roi_average_pooling_2d(x, r, i, 2, 1.0)
    assert.are.same({ { { { 1, -math.huge }, { -math.huge, -math.huge } } } }, ym.array:totable())
    assert.are.same({ { { { 1, 0 }, { 0, 0 } } } }, ya.array:totable())
    local g = chainer.grad({ F.sum(F.maximum(ym, T.zeros(ym.shape, 'float64'))) }, { x })[1]
    assert.are.equal(1, F.sum(g).array:item())   -- the one argmax cell of bin 0
  end)

  it('average pooling spreads gy / bin size over each bin', function()
    local x = chainer.Variable(T.zeros({ 1, 1, 3, 3 }, 'float64'))
    local y = F.roi_average_pooling_2d(x, T.array({ { 0, 0, 3, 3 } }, 'float64'), T.array({ 0 }, 'int32'), 1, 1.0)
    y.grad = T.ones(y.shape, 'float64')
    y:backward()
    chainer.testing.assert_allclose(x.grad, T.full({ 1, 1, 3, 3 }, 1 / 9, 'float64'))
  end)

  it('reject bad arguments with the function name', function()
    local x = T.zeros({ 1, 1, 4, 4 })
    local r, i = T.array({ { 0, 0, 2, 2 } }), T.array({ 0 }, 'int32')
    assert.has_error(function() F.roi_max_pooling_2d(x, T.zeros({ 1, 5 }), i, 2, 1.0) end,
      'roi_max_pooling_2d: rois must be (R, 4) (y_min, x_min, y_max, x_max), got shape (1, 5)')
    assert.has_error(function() F.roi_average_pooling_2d(x, r, T.array({ 0, 0 }, 'int32'), 2, 1.0) end,
      'roi_average_pooling_2d: roi_indices must be (R) with R = 1 (the rows of rois), got shape (2,)')
    assert.has_error(function() F.roi_max_pooling_2d(x, r, i, 0, 1.0) end,
      'roi_max_pooling_2d: outsize must be a positive integer (got 0)')
    assert.has_error(function() F.roi_average_pooling_2d(x, r, i, 2, -1) end,
      'roi_average_pooling_2d: spatial_scale must be a positive number (got -1)')
    assert.has_error(function() F.roi_max_pooling_2d(x, r, i, { outsize = 2, spatial_scale = 1, pad = 1 }) end)
    assert.has_error(function() F.roi_max_pooling_2d(T.zeros({ 4, 4 }), r, i, 2, 1.0) end,
      'roi_max_pooling_2d: x must be 4-d (N, C, H, W), got 2-d with shape (4, 4)')
    assert.has_error(function() F.roi_max_pooling_2d(x, r, T.array({ 3 }, 'int32'), 2, 1.0) end)
    assert.has_error(function() F.roi_average_pooling_2d(x, r, T.array({ 0.5 }), 2, 1.0) end,
      'roi_average_pooling_2d: roi_indices must be an integer tensor (got float32)')
  end)
end)

describe('Chainer 7 ROI functions in float16', function()
  it('compute in float32 and round back, gradients included', function()
    local x32 = T.random.uniform(-1, 1, { 1, 2, 5, 5 }, 'float32')
    local r, i = T.array({ { 0, 0, 4, 4 } }), T.array({ 0 }, 'int32')
    for _, f in ipairs({ F.roi_max_pooling_2d, F.roi_average_pooling_2d, F.roi_max_align_2d }) do
      local x = chainer.Variable(x32:astype('float16'))
      local y = f(x, r, i, 2, 1.0)
      assert.are.equal('float16', y.dtype)
      chainer.testing.assert_allclose(y.array:astype('float32'), f(x32:astype('float16'):astype('float32'), r, i, 2,
        1.0), { atol = 1e-3, rtol = 1e-2 })
      y.grad = T.ones(y.shape, 'float16')
      y:backward()
      assert.are.equal('float16', x.grad.dtype)
    end
  end)
end)

describe('F.roi_max_align_2d', function()
  it('routes the gradient to the bilinear neighbours of the largest sample', function()
    -- one bin, 2 x 2 samples at (0.5, 0.5), (0.5, 1.5), (1.5, 0.5), (1.5, 1.5)
    local x = chainer.Variable(T.array({ { { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 8 } } } }, 'float64'))
    local r, i = T.array({ { 0, 0, 2, 2 } }, 'float64'), T.array({ 0 }, 'int32')
    local y = F.roi_max_align_2d(x, r, i, 1, 1.0, 2)
    assert.are.equal(2, y.array:item())   -- the sample at (1.5, 1.5): 8 / 4
    y.grad = T.ones(y.shape, 'float64')
    y:backward()
    chainer.testing.assert_allclose(x.grad,
      T.array({ { { { 0, 0, 0 }, { 0, 0.25, 0.25 }, { 0, 0.25, 0.25 } } } }, 'float64'))
  end)

  it('gives -inf where no sample lies in the image', function()
    local y = F.roi_max_align_2d(T.ones({ 1, 1, 2, 2 }), T.array({ { 5, 5, 9, 9 } }), T.array({ 0 }, 'int32'), 1, 1.0)
    assert.are.equal(-math.huge, y.array:item())
  end)

  it('rejects a bad sampling_ratio', function()
    assert.has_error(function()
      F.roi_max_align_2d(T.ones({ 1, 1, 2, 2 }), T.array({ { 0, 0, 1, 1 } }), T.array({ 0 }, 'int32'), 1, 1.0,
        { sampling_ratio = 0 })
    end, 'roi_max_align_2d: sampling_ratio must be a positive integer (got 0)')
  end)
end)

-- F.roi_pooling_2d and F.roi_average_align_2d
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = require 'functions.pooling._ref'
local RR = require 'functions.pooling._roi_ref'

-- ROIs (y_min, x_min, y_max, x_max) on a 7 x 6 image, some reaching
-- outside it, one degenerate, one for image 1.
local ROIS = { { 0, 0, 3, 3 }, { 1.2, 2, 6.4, 5 }, { 2, 2, 2, 2 }, { -2, -1, 4, 8 }, { 4, 0, 12, 10 } }
local IDX = { 0, 1, 0, 1, 0 }
local function rois(dt) return T.array(ROIS, dt or 'float32') end
local function idx() return T.array(IDX, 'int32') end

local function ref_max(x, outh, outw, scale)
  return RR.pool(x, rois():totable(), IDX, outh, outw, scale, 1, 'max', 0)
end
local function ref_align(x, outh, outw, scale, sr)
  return RR.align(x, rois():totable(), IDX, outh, outw, scale, sr, 'mean')
end

function_spec.describe('F.roi_pooling_2d', {
  fn = function(x, o) return F.roi_pooling_2d(x, rois(), idx(), o.outsize, o.scale) end,
  inputs = function(dt) return { R.distinct({ 2, 3, 7, 6 }, dt) } end,
  reference = function(x, o)
    local oh, ow = RR.pair(o.outsize)
    return ref_max(x, oh, ow, o.scale)
  end,
  double_backward = true,
  cases = {
    { name = '2x2 scale 1', opts = { outsize = 2, scale = 1.0 } },
    { name = '3x2 scale 0.5', opts = { outsize = { 3, 2 }, scale = 0.5 } },
    { name = '4x4 (bins smaller than cells)', opts = { outsize = 4, scale = 1.0 } },
  },
})

function_spec.describe('F.roi_average_align_2d', {
  fn = function(x, o)
    return F.roi_average_align_2d(x, rois(), idx(), o.outsize, o.scale, { sampling_ratio = o.sampling_ratio })
  end,
  inputs = function(dt) return { T.random.uniform(-1, 1, { 2, 2, 7, 6 }, dt) } end,
  reference = function(x, o)
    local oh, ow = RR.pair(o.outsize)
    return ref_align(x, oh, ow, o.scale, o.sampling_ratio)
  end,
  double_backward = true,
  cases = RR.ALIGN_CASES,
})

local function grad_of(fn, x)
  local v = chainer.Variable(x)
  local y = fn(v)
  y.grad = T.ones(y.shape, y.dtype)
  y:backward()
  return v.grad
end

describe('F.roi_pooling_2d', function()
  it('picks hand-computed maxima and routes the gradient to them', function()
    local x = T.arange(30, 'float64'):reshape({ 1, 1, 6, 5 })
    local r = T.array({ { 0, 0, 3, 3 }, { 2, 2, 2, 2 } }, 'float64')
    local i = T.array({ 0, 0 }, 'int32')
    local y = F.roi_pooling_2d(x, r, i, 2, 1.0)
    -- ROI 0 covers rows/cols 0..3 in 2x2 bins; ROI 1 is the single cell (2, 2)
    assert.are.same({ { { { 6, 8 }, { 16, 18 } } }, { { { 12, 12 }, { 12, 12 } } } }, y.array:totable())
    local g = grad_of(function(v) return F.roi_pooling_2d(v, r, i, 2, 1.0) end, x)
    local gt = g:totable()[1][1]
    assert.are.equal(4, gt[3][3])   -- cell (2, 2) is the max of all four bins of ROI 1
    assert.are.equal(1, gt[2][2])
    assert.are.equal(1, gt[4][4])
    assert.are.equal(0, gt[1][1])
  end)
  it("takes Chainer's arguments: rois (R, 5) with the batch index, outh, outw, spatial_scale", function()
    local x = R.distinct({ 2, 3, 7, 6 }, 'float64')
    local r5 = {}
    for k, b in ipairs(ROIS) do r5[k] = { IDX[k], b[2], b[1], b[4], b[3] } end
    local y1 = F.roi_pooling_2d(x, T.array(r5, 'float32'), 3, 2, 0.5)
    local y2 = F.roi_pooling_2d(x, rois(), idx(), { 3, 2 }, 0.5)
    assert.are.same(y2.array:totable(), y1.array:totable())
    -- Chainer's keywords, all or some of them
    local y3 = F.roi_pooling_2d(x, T.array(r5, 'float32'), { outh = 3, outw = 2, spatial_scale = 0.5 })
    assert.are.same(y2.array:totable(), y3.array:totable())
    local y4 = F.roi_pooling_2d(x, T.array(r5, 'float32'), 3, { outw = 2, spatial_scale = 0.5 })
    assert.are.same(y2.array:totable(), y4.array:totable())
    local y5 = F.roi_pooling_2d(x, rois(), { roi_indices = idx(), outsize = { 3, 2 }, spatial_scale = 0.5 })
    assert.are.same(y2.array:totable(), y5.array:totable())
    assert.error_matches(function() F.roi_pooling_2d(x, T.array(r5, 'float32'), 3, 2, { outw = 2, spatial_scale = 0.5 }) end,
      'roi_pooling_2d: outw given both positionally and in the options')
    assert.error_matches(function() F.roi_pooling_2d(x, T.array(r5, 'float32'), { outh = 3, outw = 2, spatial_scale = 0.5, k = 1 }) end,
      "roi_pooling_2d: unknown option 'k'")
  end)
  it('gives 0 for bins outside the image and no gradient there', function()
    local x = T.ones({ 1, 1, 4, 4 }, 'float32')
    local y = F.roi_pooling_2d(x, T.array({ { 10, 10, 12, 12 } }, 'float32'), T.array({ 0 }, 'int64'), 2, 1.0)
    assert.are.same({ { { { 0, 0 }, { 0, 0 } } } }, y.array:totable())
  end)
  it('works on float16 and non-contiguous x', function()
    local x = R.distinct({ 2, 3, 6, 7 }, 'float64'):transpose({ 0, 1, 3, 2 })
    local y = F.roi_pooling_2d(x, rois(), idx(), 2, 1.0)
    local testing_ref = ref_max(x:copy(), 2, 2, 1.0)
    chainer.testing.assert_allclose(y.array, testing_ref, { atol = 0, rtol = 0 })
    local yh = F.roi_pooling_2d(x:astype('float16'), rois(), idx(), 2, 1.0)
    assert.are.equal('float16', yh.dtype)
    chainer.testing.assert_allclose(yh.array:astype('float64'), testing_ref, { atol = 1e-2, rtol = 1e-3 })
  end)
  it('rejects bad inputs with errors naming the function and argument', function()
    local x = T.zeros({ 2, 3, 7, 6 }, 'float32')
    assert.has_error(function() F.roi_pooling_2d(T.zeros({ 3, 7, 6 }, 'float32'), rois(), idx(), 2, 1.0) end,
      'roi_pooling_2d: x must be 4-d (N, C, H, W), got 3-d with shape (3, 7, 6)')
    assert.error_matches(function() F.roi_pooling_2d(x, T.zeros({ 5, 3 }, 'float32'), idx(), 2, 1.0) end,
      'roi_pooling_2d: rois must be %(R, 4%)')
    assert.error_matches(function() F.roi_pooling_2d(x, rois(), T.zeros({ 5 }, 'float32'), 2, 1.0) end,
      'roi_pooling_2d: roi_indices must be an integer tensor')
    assert.error_matches(function() F.roi_pooling_2d(x, rois(), T.array({ 0, 1, 2 }, 'int32'), 2, 1.0) end,
      'roi_pooling_2d: roi_indices must be %(R%) with R = 5')
    assert.error_matches(function() F.roi_pooling_2d(x, rois(), T.array({ 0, 1, 2, 0, 0 }, 'int32'), 2, 1.0) end,
      'roi_pooling_2d: roi_indices%[2%] = 2 is out of range for a batch of 2 images')
    assert.error_matches(function() F.roi_pooling_2d(x, rois(), idx(), 0, 1.0) end,
      'roi_pooling_2d: outsize must be a positive integer')
    assert.error_matches(function() F.roi_pooling_2d(x, rois(), idx(), 2) end,
      'roi_pooling_2d: spatial_scale must be a positive number')
    assert.error_matches(function() F.roi_pooling_2d(T.zeros({ 2, 3, 7, 6 }, 'int32'), rois(), idx(), 2, 1.0) end,
      'roi_pooling_2d: x must be a float tensor')
  end)
end)

describe('F.roi_average_align_2d', function()
  it('averages bilinear samples (hand-computed)', function()
    -- x[h, w] = 10 h + w is linear, so every bilinear sample inside the
    -- image is exact: bin (i, j) of ROI (0, 0, 4, 4) with 2x2 bins of
    -- 2 cells, 2 samples each at 0.5 and 1.5 -> mean at centre (1 + 2i, 1 + 2j)
    local rows = {}
    for h = 0, 5 do
      rows[h + 1] = {}
      for w = 0, 5 do rows[h + 1][w + 1] = 10 * h + w end
    end
    local x = T.array({ { rows } }, 'float64')
    local y = F.roi_average_align_2d(x, T.array({ { 0, 0, 4, 4 } }, 'float64'), T.array({ 0 }, 'int32'), 2, 1.0)
    chainer.testing.assert_allclose(y.array, T.array({ { { { 11, 13 }, { 31, 33 } } } }, 'float64'),
      { atol = 1e-12, rtol = 0 })
  end)
  it("takes Chainer's keyword arguments (outsize, spatial_scale, sampling_ratio)", function()
    local x = R.distinct({ 2, 3, 7, 6 }, 'float32')
    local y1 = F.roi_average_align_2d(x, rois(), idx(), { 2, 3 }, 0.5, 2)
    local y2 = F.roi_average_align_2d(x, rois(), idx(), { outsize = { 2, 3 }, spatial_scale = 0.5, sampling_ratio = 2 })
    assert.are.same(y1.array:totable(), y2.array:totable())
    local y3 = F.roi_average_align_2d(x, rois(), idx(), { 2, 3 }, { spatial_scale = 0.5, sampling_ratio = 2 })
    assert.are.same(y1.array:totable(), y3.array:totable())
  end)
  it('rejects bad inputs with errors naming the function and argument', function()
    local x = T.zeros({ 2, 3, 7, 6 }, 'float32')
    assert.error_matches(function() F.roi_average_align_2d(x, rois(), idx(), 2, 1.0, { sampling_ratio = 0 }) end,
      'roi_average_align_2d: sampling_ratio must hold positive integers')
    assert.error_matches(function() F.roi_average_align_2d(x, rois(), idx(), 2, 1.0, { bogus = 1 }) end,
      "roi_average_align_2d: unknown option 'bogus'")
    assert.error_matches(function() F.roi_average_align_2d(x, rois(), T.array({ 0, 0, 0, 0, 7 }, 'int64'), 2, 1.0) end,
      'roi_average_align_2d: roi_indices%[4%] = 7 is out of range')
  end)
end)

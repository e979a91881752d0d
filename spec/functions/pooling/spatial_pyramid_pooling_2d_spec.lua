-- F.spatial_pyramid_pooling_2d
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = require 'functions.pooling._ref'

function_spec.describe('F.spatial_pyramid_pooling_2d', {
  fn = function(x) return F.spatial_pyramid_pooling_2d(x, 3, { pooling = 'max' }) end,
  inputs = function(dt) return { R.distinct({ 2, 2, 6, 6 }, dt) } end,
  reference = function(x)
    -- level 0: global max; level 1: 2x2 bins (k 3, pad 0); level 2: 4x4
    -- bins (k 2, pad 1, ceil mode)
    local l0 = R.pool(x, { 6, 6 }, { 6, 6 }, { 0, 0 }, true, 'max'):reshape({ 2, 2, 1, 1 })
    local l1 = R.pool(x, { 3, 3 }, { 3, 3 }, { 0, 0 }, true, 'max'):reshape({ 2, 8, 1, 1 })
    local l2 = R.pool(x, { 2, 2 }, { 2, 2 }, { 1, 1 }, true, 'max'):reshape({ 2, 32, 1, 1 })
    return T.concat({ l0, l1, l2 }, 1)
  end,
  double_backward = true,
})

describe('F.spatial_pyramid_pooling_2d', function()
  it('has shape (N, C * sum 4^l, 1, 1); bins wholly in the padding give -inf as in Chainer', function()
    local y = F.spatial_pyramid_pooling_2d(T.ones({ 1, 1, 5, 5 }), 3)
    assert.are.equal(-math.huge, y.array:reshape({ -1 }):totable()[21])
    assert.are.same({ 3, 4 * 21, 1, 1 }, F.spatial_pyramid_pooling_2d(T.zeros({ 3, 4, 8, 8 }), 3).shape)
  end)
  it('rejects bad arguments', function()
    assert.error_matches(function() F.spatial_pyramid_pooling_2d(T.zeros({ 1, 1, 4, 4 }), 0) end,
      'spatial_pyramid_pooling_2d: pyramid_height must be a positive integer')
    assert.error_matches(function() F.spatial_pyramid_pooling_2d(T.zeros({ 1, 1, 4, 4 }), 2, { pooling = 'average' }) end,
      "spatial_pyramid_pooling_2d: pooling must be 'max'")
  end)
end)

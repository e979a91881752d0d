-- F.unpooling_1d/2d/nd, F.upsampling_2d
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = require 'functions.pooling._ref'

-- unpooling with k == s and no padding: every cell repeated k x k times
local function repeat2d(x, k, oh, ow)
  local s = x.shape
  local v = x:reshape({ s[1], s[2], s[3], 1, s[4], 1 })
  local y = v:broadcast_to({ s[1], s[2], s[3], k, s[4], k }):contiguous():reshape({ s[1], s[2], s[3] * k, s[4] * k })
  return y:slice({}, {}, { 0, oh }, { 0, ow }):contiguous()
end

function_spec.describe('F.unpooling_2d', {
  fn = function(x) return F.unpooling_2d(x, 2, { cover_all = false }) end,
  inputs = function(dt) return { T.random.randn({ 2, 3, 3, 3 }, dt) } end,
  reference = function(x) return repeat2d(x, 2, 6, 6) end,
  double_backward = true,
})

function_spec.describe('F.unpooling_2d (overlapping windows, outsize)', {
  fn = function(x) return F.unpooling_2d(x, 3, { stride = 2, pad = 1, outsize = { 5, 5 }, cover_all = false }) end,
  inputs = function(dt) return { T.random.randn({ 1, 2, 3, 3 }, dt) } end,
  reference = function(x)
    -- the adjoint of sum pooling: y[i] = sum of x over the windows containing i
    local y = T.zeros({ 1, 2, 5, 5 }, 'float64')
    local xv = x:astype('float64')
    for oh = 0, 2 do for ow = 0, 2 do
      for kh = 0, 2 do for kw = 0, 2 do
        local h, w = oh * 2 - 1 + kh, ow * 2 - 1 + kw
        if h >= 0 and h < 5 and w >= 0 and w < 5 then
          local dst = y:slice({}, {}, { h, h + 1 }, { w, w + 1 })
          dst:copy_(dst + xv:slice({}, {}, { oh, oh + 1 }, { ow, ow + 1 }))
        end
      end end
    end end
    return y:astype(x.dtype)
  end,
  double_backward = true,
})

function_spec.describe('F.unpooling_1d', {
  fn = function(x) return F.unpooling_1d(x, 2, { cover_all = false }) end,
  inputs = function(dt) return { T.random.randn({ 2, 2, 3 }, dt) } end,
  reference = function(x)
    local s = x.shape
    return x:reshape({ s[1], s[2], s[3], 1 }):broadcast_to({ s[1], s[2], s[3], 2 }):contiguous():reshape({ s[1], s[2], 6 })
  end,
  double_backward = true,
})

function_spec.describe('F.upsampling_2d', {
  fn = function(x, idx) return F.upsampling_2d(x, idx, 2, { outsize = { 5, 5 } }) end,
  inputs = function(dt)
    local _, idx = F.max_pooling_2d(R.distinct({ 2, 2, 5, 5 }, 'float64'), 2, { return_indices = true })
    return { T.random.randn({ 2, 2, 3, 3 }, dt), idx }
  end,
  reference = function(x, idx)
    -- each value goes to its argmax cell; upsampling inverts max pooling's routing
    local flat_x = x:astype('float64'):reshape({ -1 }):totable()
    local flat_i = idx:reshape({ -1 }):totable()
    local y = {}
    for i = 1, 2 * 2 * 25 do y[i] = 0 end
    local n = 0
    for pl = 0, 3 do for oh = 0, 2 do for ow = 0, 2 do
      n = n + 1
      local k = flat_i[n]
      local h, w = oh * 2 + math.floor(k / 2), ow * 2 + k % 2
      if h < 5 and w < 5 then y[pl * 25 + h * 5 + w + 1] = y[pl * 25 + h * 5 + w + 1] + flat_x[n] end
    end end end
    return T.array(y, 'float64'):reshape({ 2, 2, 5, 5 }):astype(x.dtype)
  end,
  double_backward = true,
})

describe('F.upsampling_2d', function()
  it('inverts max pooling on the argmax cells; default outsize is get_deconv_outsize', function()
    local x = R.distinct({ 1, 1, 4, 4 }, 'float64') + 100
    local y, idx = F.max_pooling_2d(x, 2, { return_indices = true })
    assert.are.same({ 1, 1, 3, 3 }, F.upsampling_2d(y, idx, 2).shape)   -- cover_all = true: 2 * 1 + 2 - 2 + 1
    local up = F.upsampling_2d(y, idx, 2, { cover_all = false })
    assert.are.same({ 1, 1, 4, 4 }, up.shape)
    local back = F.max_pooling_2d(up, 2)
    assert.are.same(y.array:totable(), back.array:totable())
  end)
  it('rejects bad inputs', function()
    local y, idx = F.max_pooling_2d(T.zeros({ 1, 1, 4, 4 }), 2, { return_indices = true })
    assert.error_matches(function() F.upsampling_2d(y, idx:astype('float32'), 2) end,
      'upsampling_2d: indexes must be an integer tensor')
    assert.error_matches(function() F.upsampling_2d(y, T.zeros({ 1, 1, 3, 3 }, 'int32'), 2) end,
      'upsampling_2d: indexes has shape')
  end)
end)

describe('F.unpooling_2d', function()
  it('rejects an outsize that does not fit', function()
    assert.error_matches(function() F.unpooling_2d(T.zeros({ 1, 1, 3, 3 }), 2, { outsize = { 9, 9 }, cover_all = false }) end,
      'unpooling_2d: outsize 9')
  end)
end)

-- F.max_pooling_1d/2d/3d/nd
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = require 'functions.pooling._ref'

local function ref(k, s, p, cover_all)
  return function(x) return (R.pool(x, k, s, p, cover_all, 'max')) end
end

function_spec.describe('F.max_pooling_2d', {
  fn = function(x, o) return F.max_pooling_2d(x, o.ksize, { stride = o.stride, pad = o.pad, cover_all = o.cover_all }) end,
  inputs = function(dt) return { R.distinct({ 2, 2, 5, 5 }, dt) } end,
  reference = function(x, o)
    local k = o.ksize
    local s = o.stride or k
    return ref({ k, k }, { s, s }, { o.pad or 0, o.pad or 0 }, o.cover_all ~= false)(x)
  end,
  double_backward = true,
  cases = {
    { name = 'k2s2 cover_all', opts = { ksize = 2, stride = 2 } },
    { name = 'k3s2p1', opts = { ksize = 3, stride = 2, pad = 1 } },
    { name = 'k2s2 no cover_all', opts = { ksize = 2, stride = 2, cover_all = false } },
    { name = 'k3s1', opts = { ksize = 3, stride = 1 } },
  },
})

function_spec.describe('F.max_pooling_1d', {
  fn = function(x) return F.max_pooling_1d(x, 2) end,
  inputs = function(dt) return { R.distinct({ 2, 3, 7 }, dt) } end,
  reference = ref({ 2 }, { 2 }, { 0 }, true), double_backward = true,
})

function_spec.describe('F.max_pooling_3d', {
  fn = function(x) return F.max_pooling_3d(x, 2, { stride = { 1, 2, 2 }, pad = { 1, 0, 0 } }) end,
  inputs = function(dt) return { R.distinct({ 1, 2, 3, 4, 3 }, dt) } end,
  reference = ref({ 2, 2, 2 }, { 1, 2, 2 }, { 1, 0, 0 }, true), double_backward = true,
})

function_spec.describe('F.max_pooling_nd (2 spatial axes, tuple ksize)', {
  fn = function(x) return F.max_pooling_nd(x, { 2, 3 }, { stride = { 2, 1 }, cover_all = false }) end,
  inputs = function(dt) return { R.distinct({ 2, 1, 5, 4 }, dt) } end,
  reference = ref({ 2, 3 }, { 2, 1 }, { 0, 0 }, false), double_backward = true,
})

describe('F.max_pooling_2d', function()
  it('gives ceil-mode sizes by default (7x7, k2 s2 -> 4x4) and floor mode without cover_all', function()
    local x = T.random.randn({ 1, 1, 7, 7 }, 'float64')
    assert.are.same({ 1, 1, 4, 4 }, F.max_pooling_2d(x, 2).shape)
    assert.are.same({ 1, 1, 3, 3 }, F.max_pooling_2d(x, 2, { cover_all = false }).shape)
    assert.are.same({ 1, 1, 3, 3 }, F.max_pooling_2d(x, 2, 2, 0, false).shape)   -- Chainer's positional order
  end)
  it('returns window-local argmax indexes and routes the gradient to them', function()
    local x = chainer.Variable(T.array({ { { { 1, 5, 2, 0 }, { 3, 4, 9, 8 }, { 0, 0, 1, 1 }, { 7, 0, 2, 6 } } } },
      'float64'))
    local y, idx = F.max_pooling_2d(x, 2, { return_indices = true })
    assert.are.same({ { { { 5, 9 }, { 7, 6 } } } }, y.array:totable())
    assert.are.same({ { { { 1, 2 }, { 2, 3 } } } }, idx:totable())
    assert.are.equal('int32', idx.dtype)
    y.grad = T.array({ { { { 1, 2 }, { 3, 4 } } } }, 'float64')
    y:backward()
    assert.are.same({ { { { 0, 1, 0, 0 }, { 0, 0, 2, 0 }, { 0, 0, 0, 0 }, { 3, 0, 0, 4 } } } }, x.grad:totable())
  end)
  it('keeps the first of equal maxima (numpy argmax) and treats padding as -inf', function()
    local x = T.full({ 1, 1, 2, 2 }, -3, 'float64')
    local y, idx = F.max_pooling_2d(x, 3, { stride = 2, pad = 1, cover_all = false, return_indices = true })
    assert.are.same({ { { { -3 } } } }, y.array:totable())
    assert.are.same({ { { { 4 } } } }, idx:totable())   -- cell (1, 1) of the window = x[0, 0]
  end)
  it('handles non-contiguous input and float16', function()
    local base = R.distinct({ 2, 2, 6, 6 }, 'float64')
    local xt = base:transpose({ 0, 1, 3, 2 })
    local want = R.pool(xt:contiguous(), { 2, 2 }, { 2, 2 }, { 0, 0 }, true, 'max')
    assert.are.same(want:totable(), F.max_pooling_2d(xt, 2).array:totable())
    local h = F.max_pooling_2d(base:astype('float16'), 2)
    assert.are.equal('float16', h.dtype)
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.max_pooling_2d(T.zeros({ 2, 3, 4 }), 2) end, 'max_pooling_2d: x must be 4%-d')
    assert.error_matches(function() F.max_pooling_2d(T.zeros({ 1, 1, 4, 4 }, 'int32'), 2) end,
      'max_pooling_2d: x must be a float tensor')
    assert.error_matches(function() F.max_pooling_2d(T.zeros({ 1, 1, 4, 4 }), 0) end,
      'max_pooling_2d: ksize must hold integers >= 1')
    assert.error_matches(function() F.max_pooling_2d(T.zeros({ 1, 1, 4, 4 }), { 2, 2, 2 }) end,
      'max_pooling_2d: ksize must be an integer or a table of 2 integers')
    assert.error_matches(function() F.max_pooling_2d(T.zeros({ 1, 1, 4, 4 }), 2, { strde = 1 }) end,
      "max_pooling_2d: unknown option 'strde'")
    assert.error_matches(function() F.max_pooling_2d(T.zeros({ 1, 1, 2, 2 }), 5, { cover_all = false }) end,
      'max_pooling_2d: the output would be empty')
    assert.error_matches(function() F.max_pooling_2d(T.zeros({ 1, 1, 4, 4 })) end, 'max_pooling_2d: ksize is required')
  end)
end)

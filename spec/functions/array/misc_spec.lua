-- F.broadcast, F.where, F.cast, F.copy, F.select_item, F.depth2space,
-- F.space2depth, F.diagonal, F.permutate, F.transpose_sequence
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

function_spec.describe('F.broadcast', {
  fn = function(a, b) return { F.broadcast(a, b) } end,
  inputs = function(dt) return { U(-1, 1, { 3, 1 }, dt), U(-1, 1, { 1, 4 }, dt) } end,
  reference = function(a, b) return { a:broadcast_to({ 3, 4 }), b:broadcast_to({ 3, 4 }) } end,
  double_backward = true,
})
function_spec.describe('F.where', {
  fn = function(x, y) return F.where(T.array({ { true, false, true }, { false, false, true } }), x, y) end,
  inputs = function(dt) return { U(-1, 1, { 2, 3 }, dt), U(-1, 1, { 2, 3 }, dt) } end,
  reference = function(x, y) return T.where(T.array({ { true, false, true }, { false, false, true } }), x, y) end,
  double_backward = true,
})
function_spec.describe('F.select_item', {
  fn = function(x) return F.select_item(x, T.array({ 2, 0, 1, 2 }, 'int32')) end,
  inputs = function(dt) return { U(-1, 1, { 4, 3 }, dt) } end,
  reference = function(x)
    local t, r = { 2, 0, 1, 2 }, {}
    for i = 1, 4 do r[i] = x:get(i - 1, t[i]) end
    return T.array(r, x.dtype)
  end,
  double_backward = true,
})
function_spec.describe('F.depth2space', {
  fn = function(x) return F.depth2space(x, 2) end,
  inputs = function(dt) return { U(-1, 1, { 2, 8, 2, 3 }, dt) } end,
  reference = function(x)
    return x:reshape({ 2, 2, 2, 2, 2, 3 }):transpose({ 0, 3, 4, 1, 5, 2 }):contiguous():reshape({ 2, 2, 4, 6 })
  end,
  double_backward = true,
})
function_spec.describe('F.space2depth', {
  fn = function(x) return F.space2depth(x, 2) end,
  inputs = function(dt) return { U(-1, 1, { 2, 2, 4, 6 }, dt) } end,
  reference = function(x)
    return x:reshape({ 2, 2, 2, 2, 3, 2 }):transpose({ 0, 3, 5, 1, 2, 4 }):contiguous():reshape({ 2, 8, 2, 3 })
  end,
  double_backward = true,
})
function_spec.describe('F.diagonal', {
  fn = function(x, o) return F.diagonal(x, o.offset, o.a1, o.a2) end,
  inputs = function(dt) return { U(-1, 1, { 3, 4, 2 }, dt) } end,
  reference = function(x, o) return x:diagonal(o.offset, o.a1, o.a2):copy() end,
  double_backward = true,
  cases = { { name = 'offset1', opts = { offset = 1, a1 = 0, a2 = 1 } }, { name = 'axes20', opts = { offset = -1, a1 = 2, a2 = 0 } } },
})
function_spec.describe('F.permutate', {
  fn = function(x, o) return F.permutate(x, T.array({ 2, 0, 3, 1 }, 'int32'), o.axis, o.inv) end,
  inputs = function(dt) return { U(-1, 1, { 4, 4 }, dt) } end,
  reference = function(x, o)
    local idx = o.inv and T.ints({ 1, 3, 0, 2 }) or T.ints({ 2, 0, 3, 1 })
    return T.take(x, idx, o.axis)
  end,
  double_backward = true,
  cases = { { name = 'axis0', opts = { axis = 0 } }, { name = 'axis1_inv', opts = { axis = 1, inv = true } } },
})
function_spec.describe('F.transpose_sequence', {
  fn = function(a, b, c) return F.transpose_sequence({ a, b, c }) end,
  inputs = function(dt) return { U(-1, 1, { 3, 2 }, dt), U(-1, 1, { 2, 2 }, dt), U(-1, 1, { 2, 2 }, dt) } end,
  reference = function(a, b, c)
    return { T.stack({ a:select(0), b:select(0), c:select(0) }), T.stack({ a:select(1), b:select(1), c:select(1) }),
      T.stack({ a:select(2) }) }
  end,
  double_backward = true,
})

describe('array misc functions', function()
  it('cast converts and casts the gradient back', function()
    local x = chainer.Variable(T.array({ 1.5, -2 }, 'float64'))
    local y = F.cast(x, 'float32')
    assert.are.equal('float32', y.dtype)
    assert.are.same({ 1.5, -2 }, y.array:totable())
    F.sum(y * 3):backward()
    assert.are.equal('float64', x.grad.dtype)
    assert.are.same({ 3, 3 }, x.grad:totable())
    assert.are.equal(x, F.cast(x, 'float64'))
    assert.error_matches(function() F.cast(x, 'complex') end, 'cast')
  end)
  it('copy copies to the CPU and back', function()
    local a = T.array({ 1, 2 }, 'float64')
    local x = chainer.Variable(a)
    local y = F.copy(x, -1)
    a:fill_(7)
    assert.are.same({ 1, 2 }, y.array:totable())
    F.sum(F.copy(x, 'cpu')):backward()
    assert.are.same({ 1, 1 }, x.grad:totable())
    assert.error_matches(function() F.copy(x, 'tpu') end, 'copy: dst must be')
  end)
  it('depth2space/space2depth known values and round trip', function()
    local x = T.arange(0, 8, 1, 'float64'):reshape({ 1, 4, 1, 2 })
    local y = F.depth2space(x, 2)
    assert.are.same({ { { { 0, 2, 1, 3 }, { 4, 6, 5, 7 } } } }, y.array:totable())
    assert.are.same(x:totable(), F.space2depth(y, 2).array:totable())
    assert.error_matches(function() F.depth2space(T.zeros({ 1, 3, 2, 2 }), 2) end, 'depth2space: the 3 channels')
  end)
  it('rejects bad input', function()
    assert.error_matches(function() F.select_item(T.zeros({ 2, 3 }), T.array({ 0, 3 }, 'int32')) end,
      'select_item: t holds 3, out of range')
    assert.error_matches(function() F.select_item(T.zeros({ 2, 3 }), T.array({ 0, 1 })) end, 'select_item: t must be an integer')
    assert.error_matches(function() F.permutate(T.zeros({ 3 }), T.array({ 0, 0, 1 }, 'int32')) end, 'permutate: indices is not a permutation')
    assert.error_matches(function() F.where(T.zeros({ 2 }), T.zeros({ 2 }), T.zeros({ 2 })) end, 'where: condition must be a bool')
    assert.error_matches(function() F.broadcast(T.zeros({ 2 }), T.zeros({ 3 })) end, 'broadcast: shapes')
    assert.error_matches(function() F.diagonal(T.zeros({ 3 })) end, 'diagonal: x must be at least 2%-d')
    assert.error_matches(function() F.transpose_sequence({ T.zeros({ 1 }), T.zeros({ 2 }) }) end, 'sorted by decreasing length')
  end)
end)

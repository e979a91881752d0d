-- Specs for tensor/sort.lua: sort, argsort (stable, NaN last, descending) and
-- unique.  Expected values from NumPy 1.24 (kind='stable').
local T = require 'chainer.tensor'

local helpers = require 'helpers'
local errors_with = helpers.errors_with

local function is_nan(v) return v ~= v end

describe('tensor.sort / argsort', function()
  it('sorts along the last axis by default and along any axis', function()
    local x = T.array({ { 3, 1, 2 }, { 0, -1, 5 } }, 'float64')
    assert.same({ { 1, 2, 3 }, { -1, 0, 5 } }, T.sort(x):totable())
    assert.same({ { 0, -1, 2 }, { 3, 1, 5 } }, T.sort(x, { axis = 0 }):totable())
    assert.same({ { 1, 1, 0 }, { 0, 0, 1 } }, T.argsort(x, { axis = 0 }):totable())
    assert.same({ { 1, 2, 0 }, { 1, 0, 2 } }, x:argsort():totable())
    assert.same({ { 0, -1, 2 }, { 3, 1, 5 } }, x:sort(0):totable()) -- a number is the axis
  end)

  it('is stable', function()
    local v = T.array({ 2, 1, 2, 1, 3, 0 }, 'int32')
    local a = T.argsort(v)
    assert.equal('int64', a.dtype)
    assert.same({ 5, 1, 3, 0, 2, 4 }, a:totable())
    -- descending keeps equal elements in their original order too
    assert.same({ 4, 0, 2, 1, 3, 5 }, T.argsort(v, { descending = true }):totable())
    assert.same({ 3, 2, 2, 1, 1, 0 }, T.sort(v, { descending = true }):totable())
  end)

  it('puts NaN last ascending and first descending', function()
    local x = T.array { 3, 0 / 0, 1, 2, 1 }
    local s = T.sort(x):totable()
    assert.same({ 1, 1, 2, 3 }, { s[1], s[2], s[3], s[4] })
    assert.is_true(is_nan(s[5]))
    assert.same({ 2, 4, 3, 0, 1 }, T.argsort(x):totable())
    assert.same({ 1, 0, 3, 2, 4 }, T.argsort(x, { descending = true }):totable())
  end)

  it('handles strided, int64, float16, bool, empty and 0-d inputs', function()
    local x = T.array({ { 5, 4 }, { 1, 9 }, { 3, 2 } }, 'int64'):transpose() -- (2, 3), strided
    assert.same({ { 1, 3, 5 }, { 2, 4, 9 } }, T.sort(x):totable())
    assert.same({ { 1, 0, 2 }, { 0, 2, 1 } }, T.argsort(x:flip(1)):totable())
    local big = T.array({ 9007199254740993LL, 9007199254740992LL }, 'int64')
    assert.same({ 1, 0 }, T.argsort(big):totable()) -- exact int64 comparison
    assert.same({ 0.5, 1.5, 2 }, T.sort(T.array({ 2, 0.5, 1.5 }, 'float16')):totable())
    assert.same({ false, true, true }, T.sort(T.array { true, false, true }):totable())
    assert.same({ 0 }, T.sort(T.zeros { 0 }).shape)
    assert.same({ 2, 0 }, T.argsort(T.zeros { 2, 0 }).shape)
    assert.equal(7, T.sort(T.array(7)):item())
    assert.same({ 2, 1, 0 }, T.argsort(T.array { { 3, 2, 1 } }, { axis = false }):totable())
  end)

  it('sorts many lines in parallel with the same result', function()
    local n, m = 300, 200
    local x = T.arange(0, n * m, 1, 'float32'):reshape(n, m):flip(1)
    local s = T.sort(x)
    assert.same({ 0, 1, 2 }, { s:get(0, 0), s:get(0, 1), s:get(0, 2) })
    assert.equal(n * m - 1, s:get(n - 1, m - 1))
    local a = T.argsort(x, { descending = true })
    assert.same({ 0, 1 }, { a:get(5, 0), a:get(5, 1) })
  end)

  it('rejects bad axes', function()
    errors_with(function() T.sort(T.zeros { 2, 2 }, { axis = 2 }) end, 'sort', 'axis 2')
    errors_with(function() T.argsort(T.zeros { 2 }, { axis = -2 }) end, 'argsort', 'axis -2')
  end)
end)

describe('tensor.unique', function()
  it('gives sorted distinct values, inverse and counts', function()
    local x = T.array({ { 3, 1 }, { 3, 2 } }, 'int32')
    local v, inv, cnt = T.unique(x, { return_inverse = true, return_counts = true })
    assert.equal('int32', v.dtype)
    assert.same({ 1, 2, 3 }, v:totable())
    assert.same({ 2, 0, 2, 1 }, inv:totable())
    assert.same({ 1, 1, 2 }, cnt:totable())
    -- values:take(inverse) rebuilds the flattened input
    assert.same({ 3, 1, 3, 2 }, v:take(inv):totable())
    local only = x:unique()
    assert.same({ 1, 2, 3 }, only:totable())
    local v2, c2 = T.unique(x, { return_counts = true })
    assert.same({ 1, 1, 2 }, c2:totable())
    assert.same({ 1, 2, 3 }, v2:totable())
  end)

  it('collapses NaNs into one value (NumPy 1.24 equal_nan)', function()
    local v, c = T.unique(T.array { 1, 0 / 0, 0.5, 0 / 0 }, { return_counts = true })
    local t = v:totable()
    assert.equal(3, #t)
    assert.same({ 0.5, 1 }, { t[1], t[2] })
    assert.is_true(is_nan(t[3]))
    assert.same({ 1, 1, 2 }, c:totable())
  end)

  it('handles empty and strided inputs', function()
    local v, inv = T.unique(T.zeros { 0 }, { return_inverse = true })
    assert.same({ 0 }, v.shape)
    assert.same({ 0 }, inv.shape)
    assert.same({ 1, 2, 4 }, T.unique(T.array({ { 4, 1 }, { 2, 4 } }, 'int64'):transpose()):totable())
  end)
end)

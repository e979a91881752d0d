-- Specs for tensor/index.lua: take, take_along_axis, scatter_add(_along_axis),
-- masked_select, nonzero and t:index advanced indexing.  Values from NumPy 1.24.
local T = require 'chainer.tensor'

local helpers = require 'helpers'
local errors_with = helpers.errors_with

local function x234() return T.arange(0, 24, 1, 'int64'):reshape(2, 3, 4) end
local function x23() return T.arange(0, 6, 1, 'int64'):reshape(2, 3) end

describe('tensor.take', function()
  it('takes along an axis with index tensors of any shape', function()
    local x = x23()
    assert.same({ { 2, 0 }, { 5, 3 } }, T.take(x, { 2, 0 }, 1):totable())
    assert.same({ { 3, 4, 5 } }, T.take(x, { 1 }, 0):totable())
    local r = T.take(x, T.array({ { 0, 1 }, { 1, 0 } }, 'int32'), 1)
    assert.same({ 2, 2, 2 }, r.shape)
    assert.same({ { { 0, 1 }, { 1, 0 } }, { { 3, 4 }, { 4, 3 } } }, r:totable())
    -- a scalar index drops the axis
    assert.same({ 1, 4 }, x:take(1, 1):totable())
  end)

  it('takes from the flattened tensor when axis is nil, wrapping negatives', function()
    assert.same({ 5, 0, 4 }, T.take(x23(), { -1, 0, 4 }):totable())
    assert.same({ { 5 } }, T.take(x23():transpose(), T.array({ { -1 } }, 'int64')):totable())
    assert.same({ 0 }, T.take(x23(), T.array({}, 'int64')).shape)
  end)

  it('works on non-contiguous inputs and keeps the dtype', function()
    local x = T.array({ { 1.5, 2.5 }, { 3.5, 4.5 } }, 'float64'):transpose()
    local r = T.take(x, { 1 }, 0)
    assert.equal('float64', r.dtype)
    assert.same({ { 2.5, 4.5 } }, r:totable())
  end)

  it('reports out-of-range indices and bad index dtypes', function()
    errors_with(function() T.take(x23(), { 3 }, 1) end, 'take', 'index 3', 'axis 1', 'size 3')
    errors_with(function() T.take(x23(), { -4 }, 1) end, 'take', 'index -4')
    errors_with(function() T.take(x23(), T.array { 0.5 }, 1) end, 'take', 'integer', 'float32')
    errors_with(function() T.take(x23(), { 0 }, 2) end, 'take', 'axis 2')
  end)
end)

describe('tensor.take_along_axis', function()
  it('gathers along an axis', function()
    local a = T.array({ { 10, 30, 20 }, { 60, 40, 50 } }, 'int64')
    assert.same({ { 20, 10 }, { 40, 40 } },
      T.take_along_axis(a, T.array({ { 2, 0 }, { 1, 1 } }, 'int64'), 1):totable())
    -- the argmax pattern: indices of shape (n, 1)
    assert.same({ { 30 }, { 60 } }, a:take_along_axis(T.array({ { 1 }, { 0 } }, 'int32'), 1):totable())
    -- broadcast indices over the other axis, negative index
    assert.same({ { 60, 40, 50 } }, T.take_along_axis(a, T.array({ { -1, 1, 1 } }, 'int64'), 0):totable())
  end)

  it('checks shapes and bounds', function()
    errors_with(function() T.take_along_axis(x23(), T.array({ 0 }, 'int64'), 1) end,
      'take_along_axis', 'dimensions')
    errors_with(function() T.take_along_axis(x23(), T.array({ { 5 } }, 'int64'), 1) end,
      'take_along_axis', 'index 5', 'size 3')
  end)
end)

describe('tensor.scatter_add', function()
  it('accumulates repeated indices (numpy.add.at)', function()
    local t = T.zeros { 2, 3 }
    local r = t:scatter_add_(1, { 0, 2, 0 }, T.array { { 1, 2, 3 }, { 4, 5, 6 } })
    assert.equal(t, r)
    assert.same({ { 4, 0, 2 }, { 10, 0, 5 } }, t:totable())
    local u = T.zeros({ 3, 2 }, 'float64')
    T.scatter_add(u, 0, T.array({ { 0, 0 }, { 2, 0 } }, 'int64'), T.array({ 1, 2 }, 'float64'))
    assert.same({ { 3, 6 }, { 0, 0 }, { 1, 2 } }, u:totable())
  end)

  it('broadcasts values, wraps negatives, works on int and strided targets', function()
    local t = T.zeros({ 4 }, 'int32')
    t:scatter_add_(0, { -1, 0, -1 }, 1)
    assert.same({ 1, 0, 0, 2 }, t:totable())
    local base = T.zeros { 3, 2 }
    base:transpose():scatter_add_(1, { 1, 1 }, T.array { 1, 2 })
    assert.same({ { 0, 0 }, { 3, 3 }, { 0, 0 } }, base:totable())
  end)

  it('scatter_add_along_axis inverts take_along_axis with accumulation', function()
    local t = T.zeros { 2, 3 }
    t:scatter_add_along_axis_(1, T.array({ { 0, 0 }, { 2, 1 } }, 'int64'), T.array { { 1, 2 }, { 3, 4 } })
    assert.same({ { 3, 0, 0 }, { 0, 4, 3 } }, t:totable())
  end)

  it('reports bad indices and shapes', function()
    errors_with(function() T.zeros { 3 }:scatter_add_(0, { 3 }, 1) end, 'scatter_add', 'index 3', 'size 3')
    errors_with(function() T.zeros { 2, 3 }:scatter_add_(1, { 0, 1 }, T.ones { 3 }) end,
      'scatter_add', 'values', '(3,)')
    errors_with(function() T.zeros { 2, 3 }:scatter_add_along_axis_(1, T.array({ 0 }, 'int64'), 1) end,
      'scatter_add_along_axis', 'dimensions')
  end)
end)

describe('tensor.masked_select / nonzero', function()
  it('selects where a bool mask is true, broadcasting the mask', function()
    local x = T.arange(0, 12, 1, 'int64'):reshape(3, 4)
    assert.same({ 0, 3, 4, 7, 8, 11 }, T.masked_select(x, T.array { true, false, false, true }):totable())
    assert.same({ 1, 5 }, x23():masked_select(T.array { { false, true, false }, { false, false, true } }):totable())
    assert.same({ 0 }, T.masked_select(x23(), T.array { false, false, false }).shape)
    errors_with(function() T.masked_select(x23(), T.array({ 1, 0, 1 }, 'int32')) end, 'masked_select', 'bool')
    errors_with(function() T.masked_select(x23(), T.array { true, false }) end, 'masked_select', 'broadcast')
  end)

  it('nonzero gives (count, ndim) int64 positions in C order', function()
    local n = T.nonzero(T.array { { 0, 1 }, { 2, 0 } })
    assert.equal('int64', n.dtype)
    assert.same({ { 0, 1 }, { 1, 0 } }, n:totable())
    assert.same({ { 1 }, { 2 } }, T.nonzero(T.array({ 0, 3, -1 }, 'int32')):totable())
    assert.same({ 0, 2 }, T.nonzero(T.zeros { 2, 2 }).shape)
    assert.same({ { 0, 0 }, { 0, 1 } }, T.nonzero(T.array { { 1, 0 }, { 2, 0 } }:transpose()):totable())
    assert.same({ { 0 }, { 2 } }, T.nonzero(T.array { 0 / 0, 0, -0.5 }):totable())
  end)
end)

describe('t:index (advanced indexing)', function()
  it('without advanced terms is t:slice', function()
    local x = x234()
    assert.same(x:slice(1, { 0, 2 }):totable(), x:index(1, { 0, 2 }):totable())
    assert.same(x:slice('..., ::2'):totable(), x:index('..., ::2'):totable())
  end)

  it('one integer array replaces its axis', function()
    local x = x234()
    assert.same({ { { 9, 10 }, { 1, 2 } }, { { 21, 22 }, { 13, 14 } } },
      x:index({ nil, nil }, T.ints { 2, 0 }, { 1, 3 }):totable())
    assert.same({ 2, 3, 2, 1 }, x:index('...', T.array({ { 0 }, { 3 } }, 'int64')).shape)
    assert.same({ { 15 }, { 23 } }, x:index(1, T.ints { 0, 2 }):index({ nil, nil }, T.ints { 3 }):totable())
    assert.same({ { 20, 21, 22, 23 } }, x:index(-1, T.ints { -1 }):totable())
  end)

  it('several integer arrays broadcast together (NumPy placement rules)', function()
    local x = x234()
    -- adjacent: the broadcast axes stay in place
    local r = x:index({ nil, nil }, T.ints { 0, 2 }, T.ints { 1, 3 })
    assert.same({ 2, 2 }, r.shape)
    assert.same({ { 1, 11 }, { 13, 23 } }, r:totable())
    -- separated by a slice: the broadcast axes go first
    local s = x:index(T.ints { 0, 1 }, { nil, nil }, T.ints { 1, 2 })
    assert.same({ 2, 3 }, s.shape)
    assert.same({ { 1, 5, 9 }, { 14, 18, 22 } }, s:totable())
    -- broadcasting (2, 1) with (2,)
    assert.same({ { 0, 3 }, { 4, 7 } },
      x:index(0, T.array({ { 0 }, { 1 } }, 'int64'), T.ints { 0, 3 }):totable())
  end)

  it('bool masks select over as many axes as they have', function()
    local x = x234()
    assert.same({ { 0, 1, 2, 3 }, { 8, 9, 10, 11 }, { 16, 17, 18, 19 } },
      x:index(T.array { { true, false, true }, { false, true, false } }):totable())
    assert.same({ { { 0, 3 }, { 4, 7 }, { 8, 11 } }, { { 12, 15 }, { 16, 19 }, { 20, 23 } } },
      x:index('...', { true, false, false, true }):totable())
  end)

  it('reports bad indices', function()
    errors_with(function() x234():index(T.ints { 2 }) end, 'index', 'index 2', 'size 2')
    errors_with(function() x234():index({ nil, nil }, T.ints { 0, 5 }, T.ints { 0, 1 }) end, 'index', 'index 5')
    errors_with(function() x234():index(T.ints { 0, 1 }, T.ints { 0, 1, 2 }) end, 'index', 'broadcast')
    errors_with(function() x234():index(0, 0, 0, T.ints { 0 }) end, 'index', 'too many')
  end)
end)

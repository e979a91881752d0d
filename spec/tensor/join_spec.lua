-- Specs for tensor/join.lua: concatenate, stack, h/v/dstack, split,
-- array_split, roll, tile, repeat, pad.  Expected values from NumPy 1.24.
local T = require 'chainer.tensor'

local helpers = require 'helpers'
local errors_with = helpers.errors_with

local function ints(v, shape) return T.array(v, 'int64'):reshape(shape or { #v }) end
local function x23() return T.arange(0, 6, 1, 'int64'):reshape(2, 3) end

describe('tensor.concatenate / stack', function()
  it('concatenates along an axis', function()
    local x = x23()
    assert.same({ { 0, 1, 2 }, { 3, 4, 5 }, { 0, 1, 2 }, { 3, 4, 5 } }, T.concatenate({ x, x }):totable())
    assert.same({ { 0, 1, 2, 0 }, { 3, 4, 5, 3 } }, T.concatenate({ x, x:slice({ nil, nil }, { 0, 1 }) }, 1):totable())
    assert.same({ { 0, 1, 2, 2, 1, 0 }, { 3, 4, 5, 5, 4, 3 } },
      T.concatenate({ x, x:flip(1) }, -1):totable()) -- negative axis, negative strides
    assert.same({ 1, 2, 3 }, T.concatenate({ T.array({ 1 }, 'int32'), T.array({}, 'int32'), T.array({ 2, 3 }, 'int32') }):totable())
  end)

  it('promotes dtypes', function()
    local r = T.concatenate({ T.array({ 1 }, 'int32'), T.array({ 2.5 }, 'float64') })
    assert.equal('float64', r.dtype)
    assert.same({ 1, 2.5 }, r:totable())
    assert.equal('float32', T.concatenate({ T.array({ true }), T.array { 1.5 } }).dtype)
  end)

  it('names the offending tensor and both shapes', function()
    errors_with(function() T.concatenate({ T.zeros { 2, 3 }, T.zeros { 2, 3 }, T.zeros { 3, 4 } }, 0) end,
      'concatenate', 'tensor 2', '(3, 4)', '(2, 3)')
    errors_with(function() T.concatenate({ T.zeros { 2 }, T.zeros { 2, 1 } }) end, 'concatenate', 'tensor 1')
    errors_with(function() T.concatenate({}) end, 'concatenate', 'at least one')
    errors_with(function() T.concatenate({ T.zeros { 2 } }, 1) end, 'concatenate', 'axis 1')
    errors_with(function() T.concatenate(T.zeros { 2 }) end, 'concatenate', 'Lua array')
  end)

  it('stacks along a new axis', function()
    local a, b = ints { 1, 2 }, ints { 3, 4 }
    assert.same({ { 1, 2 }, { 3, 4 } }, T.stack({ a, b }):totable())
    assert.same({ { 1, 3 }, { 2, 4 } }, T.stack({ a, b }, 1):totable())
    assert.same({ { 1, 3 }, { 2, 4 } }, T.stack({ a, b }, -1):totable())
    assert.same({ 2, 2, 3 }, T.stack({ x23(), x23() }, 1).shape)
    assert.same({ 2 }, T.stack({ T.array(1), T.array(2) }).shape)
    errors_with(function() T.stack({ T.zeros { 2 }, T.zeros { 3 } }) end, 'stack', 'tensor 1', '(3,)', '(2,)')
  end)

  it('hstack, vstack and dstack', function()
    assert.same({ 1, 2, 3, 4 }, T.hstack({ ints { 1, 2 }, ints { 3, 4 } }):totable())
    assert.same({ { 0, 1, 2, 0, 1, 2 }, { 3, 4, 5, 3, 4, 5 } }, T.hstack({ x23(), x23() }):totable())
    assert.same({ { 1, 2 }, { 3, 4 } }, T.vstack({ ints { 1, 2 }, ints { 3, 4 } }):totable())
    assert.same({ { { 1, 3 }, { 2, 4 } } }, T.dstack({ ints { 1, 2 }, ints { 3, 4 } }):totable())
  end)
end)

describe('tensor.split', function()
  it('splits into equal sections (views)', function()
    local x = T.arange(0, 6, 1, 'int64')
    local parts = T.split(x, 3)
    assert.equal(3, #parts)
    assert.same({ 0, 1 }, parts[1]:totable())
    assert.same({ 4, 5 }, parts[3]:totable())
    parts[2]:fill_(9) -- views share memory
    assert.same({ 0, 1, 9, 9, 4, 5 }, x:totable())
    errors_with(function() T.split(T.arange(0, 5, 1), 2) end, 'split', 'equal')
  end)

  it('splits at 0-based indices like NumPy (clamped, possibly empty)', function()
    local x = T.arange(0, 6, 1, 'int64')
    local p = T.split(x, { 2, 10 })
    assert.same({ 0, 1 }, p[1]:totable())
    assert.same({ 2, 3, 4, 5 }, p[2]:totable())
    assert.same({ 0 }, p[3].shape)
    local q = x:split({ 4, 2 })
    assert.same({ 0, 1, 2, 3 }, q[1]:totable())
    assert.same({ 0 }, q[2].shape)
    assert.same({ 2, 3, 4, 5 }, q[3]:totable())
    local c = T.split(x23(), { 1 }, 1)
    assert.same({ { 0 }, { 3 } }, c[1]:totable())
    assert.same({ { 1, 2 }, { 4, 5 } }, c[2]:totable())
  end)

  it('array_split allows uneven sections', function()
    local p = T.array_split(T.arange(0, 7, 1, 'int64'), 3)
    assert.same({ 0, 1, 2 }, p[1]:totable())
    assert.same({ 3, 4 }, p[2]:totable())
    assert.same({ 5, 6 }, p[3]:totable())
  end)
end)

describe('tensor.roll / tile / repeat', function()
  it('rolls flattened or along an axis', function()
    assert.same({ { 5, 0, 1 }, { 2, 3, 4 } }, T.roll(x23(), 1):totable())
    assert.same({ { 1, 2, 0 }, { 4, 5, 3 } }, T.roll(x23(), -4, 1):totable())
    assert.same({ { 3, 4, 5 }, { 0, 1, 2 } }, x23():roll(1, 0):totable())
    assert.same({ { 5, 3, 4 }, { 2, 0, 1 } }, T.roll(x23(), { 1, 1 }, { 0, 1 }):totable())
    assert.same({ 0 }, T.roll(T.zeros { 0 }, 3, 0).shape)
    errors_with(function() T.roll(x23(), 1, 2) end, 'roll', 'axis 2')
  end)

  it('tiles like numpy.tile', function()
    assert.same({ 1, 2, 1, 2, 1, 2 }, T.tile(ints { 1, 2 }, 3):totable())
    local t = T.tile(x23(), { 2, 1, 2 })
    assert.same({ 2, 2, 6 }, t.shape)
    assert.same({ { 0, 1, 2, 0, 1, 2 }, { 3, 4, 5, 3, 4, 5 } }, t:slice(1):totable())
    assert.same({ { 0, 1, 2 }, { 3, 4, 5 } }, T.tile(x23(), 1):totable())
    assert.same({ 2, 0 }, T.tile(x23(), { 1, 0 }).shape)
    errors_with(function() T.tile(x23(), { -1 }) end, 'tile', 'negative')
  end)

  it('repeats like numpy.repeat', function()
    assert.same({ 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5 }, T.repeat_(x23(), 2):totable())
    assert.same({ { 0, 2, 2 }, { 3, 5, 5 } }, T['repeat'](x23(), { 1, 0, 2 }, 1):totable())
    assert.same({ { 0, 1, 2 }, { 0, 1, 2 }, { 3, 4, 5 }, { 3, 4, 5 } }, x23():repeat_(2, 0):totable())
    assert.same({ { 0, 0, 1, 1, 2, 2 }, { 3, 3, 4, 4, 5, 5 } }, x23():transpose():repeat_(2, 0):transpose():totable())
    errors_with(function() T.repeat_(x23(), { 1, 2 }, 1) end, 'repeat', '2 counts', 'size 3')
    errors_with(function() T.repeat_(x23(), -1, 0) end, 'repeat', 'negative')
  end)
end)

describe('tensor.pad', function()
  it('pads with a constant', function()
    assert.same({ { 9, 9, 0, 1, 2 }, { 9, 9, 3, 4, 5 }, { 9, 9, 9, 9, 9 } },
      T.pad(x23(), { { 0, 1 }, { 2, 0 } }, { constant_values = 9 }):totable())
    assert.same({ 0, 0, 1, 2, 0 }, T.pad(T.array { 1, 2 }, { 2, 1 }):totable())
    assert.same({ 4, 5 }, T.pad(x23(), 1).shape)
  end)

  it('pads with edge and reflect, including widths beyond the axis', function()
    assert.same({ 4, 3, 2, 1, 2, 3, 4, 3, 2 }, T.pad(T.array { 1, 2, 3, 4 }, { 3, 2 }, { mode = 'reflect' }):totable())
    assert.same({ 2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2, 1 },
      T.pad(ints { 1, 2, 3 }, { 5, 6 }, { mode = 'reflect' }):totable())
    local x = T.arange(0, 6, 1, 'int64'):reshape(2, 3)
    assert.same({ { 4, 5, 4, 3, 4, 5, 4 }, { 1, 2, 1, 0, 1, 2, 1 }, { 4, 5, 4, 3, 4, 5, 4 },
      { 1, 2, 1, 0, 1, 2, 1 }, { 4, 5, 4, 3, 4, 5, 4 } }, T.pad(x, { { 1, 2 }, { 3, 1 } }, { mode = 'reflect' }):totable())
    assert.same({ { 0, 0, 0, 0, 1, 2, 2 }, { 0, 0, 0, 0, 1, 2, 2 }, { 3, 3, 3, 3, 4, 5, 5 },
      { 3, 3, 3, 3, 4, 5, 5 }, { 3, 3, 3, 3, 4, 5, 5 } }, x:pad({ { 1, 2 }, { 3, 1 } }, { mode = 'edge' }):totable())
    -- a transposed input
    assert.same({ { 0, 3 }, { 0, 3 }, { 1, 4 }, { 2, 5 } },
      T.pad(x:transpose(), { { 1, 0 }, { 0, 0 } }, { mode = 'edge' }):totable())
    assert.same({ { 2, 1, 0, 1 }, { 5, 4, 3, 4 } }, T.pad(x:flip(1), { { 0, 0 }, { 0, 1 } }, { mode = 'reflect' }):totable())
  end)

  it('rejects bad arguments', function()
    errors_with(function() T.pad(x23(), 1, { mode = 'wrap' }) end, 'pad', 'wrap')
    errors_with(function() T.pad(x23(), -1) end, 'pad', '>= 0')
    errors_with(function() T.pad(x23(), { { 1, 1 }, { 1, 1 }, { 1, 1 } }) end, 'pad', '3 pairs')
    errors_with(function() T.pad(T.zeros { 0 }, 1, { mode = 'edge' }) end, 'pad', 'empty axis')
  end)
end)

-- F.pad, F.pad_sequence
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

function_spec.describe('F.pad', {
  fn = function(x, o) return F.pad(x, o.pw, o.mode, { constant_values = o.v }) end,
  inputs = function(dt) return { U(-1, 1, { 2, 3 }, dt) } end,
  reference = function(x, o) return T.pad(x, o.pw, { mode = o.mode, constant_values = o.v }) end,
  double_backward = true,
  cases = {
    { name = 'constant', opts = { pw = { { 1, 2 }, { 0, 1 } }, mode = 'constant' } },
    { name = 'constant_value', opts = { pw = 1, mode = 'constant', v = 2.5 } },
    { name = 'edge', opts = { pw = { 2, 1 }, mode = 'edge' } },
    { name = 'reflect', opts = { pw = { { 1, 1 }, { 2, 2 } }, mode = 'reflect' } },
  },
})

function_spec.describe('F.pad_sequence', {
  fn = function(a, b, c) return F.pad_sequence({ a, b, c }, { padding = -1 }) end,
  inputs = function(dt) return { U(-1, 1, { 3, 2 }, dt), U(-1, 1, { 1, 2 }, dt), U(-1, 1, { 2, 2 }, dt) } end,
  reference = function(a, b, c)
    return T.stack({ a, T.pad(b, { { 0, 2 }, { 0, 0 } }, { constant_values = -1 }),
      T.pad(c, { { 0, 1 }, { 0, 0 } }, { constant_values = -1 }) })
  end,
  double_backward = true,
})

describe('F.pad', function()
  it('computes known values and the edge gradient', function()
    local x = chainer.Variable(T.array({ 1, 2 }, 'float64'))
    local y = F.pad(x, { pad_width = { { 2, 1 } }, mode = 'edge' })
    assert.are.same({ 1, 1, 1, 2, 2 }, y.array:totable())
    F.sum(y):backward()
    assert.are.same({ 3, 2 }, x.grad:totable())
    assert.are.same({ 0, 1, 2, 0 }, F.pad(x, 1, 'constant').array:totable())
    assert.are.same({ 2, 4 }, F.pad_sequence({ T.zeros({ 2 }), T.zeros({ 1 }) }, 4).shape)
  end)
  it('rejects bad input', function()
    assert.error_matches(function() F.pad(T.zeros({ 2 }), 1, 'wrap') end, "pad: unknown mode 'wrap'")
    assert.error_matches(function() F.pad(T.zeros({ 2 }), -1, 'constant') end, 'pad: pad widths must be non%-negative')
    assert.error_matches(function() F.pad_sequence({ T.zeros({ 3 }) }, 2) end, 'pad_sequence: length 2 is shorter')
  end)
end)

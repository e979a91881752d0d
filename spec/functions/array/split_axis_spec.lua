-- F.split_axis, F.separate
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

function_spec.describe('F.split_axis', {
  fn = function(x, o) return F.split_axis(x, o.ios, o.axis) end,
  inputs = function(dt) return { U(-1, 1, { 5, 6 }, dt) } end,
  reference = function(x, o) return T.split(x, o.ios, o.axis) end,
  double_backward = true,
  cases = { { name = 'sections', opts = { ios = 3, axis = 1 } }, { name = 'indices', opts = { ios = { 1, 3 }, axis = 0 } },
    { name = 'clamped', opts = { ios = { 2, 9 }, axis = -1 } } },
})

function_spec.describe('F.separate', {
  fn = function(x, o) return F.separate(x, o.axis) end,
  inputs = function(dt) return { U(-1, 1, { 2, 3, 2 }, dt) } end,
  reference = function(x, o)
    local r = {}
    for i = 0, x.shape[o.axis + 1] - 1 do r[#r + 1] = x:select(i, o.axis):copy() end
    return r
  end,
  double_backward = true,
  cases = { { name = 'axis0', opts = { axis = 0 } }, { name = 'axis1', opts = { axis = 1 } } },
})

describe('F.split_axis', function()
  it('returns views with known values and gradients with unused pieces', function()
    local x = chainer.Variable(T.arange(0, 6, 1, 'float64'))
    local ys = F.split_axis(x, { indices_or_sections = { 2 }, axis = 0 })
    assert.are.equal(2, #ys)
    assert.are.same({ 2, 3, 4, 5 }, ys[2].array:totable())
    F.sum(ys[2]):backward()
    assert.are.same({ 0, 0, 1, 1, 1, 1 }, x.grad:totable())
  end)
  it('rejects bad input', function()
    assert.error_matches(function() F.split_axis(T.ones({ 5 }), 2, 0) end, 'split_axis: axis 0 of size 5 cannot be split')
    assert.error_matches(function() F.split_axis(T.ones({ 5 }), 2, 1) end, 'split_axis: axis 1 is out of range')
    assert.error_matches(function() F.separate(T.ones({})) end, 'separate: cannot separate a 0%-d')
  end)
end)

-- F.scatter_add
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

function_spec.describe('F.scatter_add', {
  fn = function(a, b, o) return F.scatter_add(a, o.s, b) end,
  inputs = function(dt, o) return { U(-1, 1, { 3, 4 }, dt), U(-1, 1, o.bshape, dt) } end,
  reference = function(a, b, o)
    local y = a:copy()
    if o.rows then y:scatter_add_(0, T.ints(o.rows), b) else y:index(unpack(o.s)):copy_(y:index(unpack(o.s)) + b) end
    return y
  end,
  double_backward = true,
  cases = {
    { name = 'int_list_dup', opts = { s = { 0, 2, 0 }, rows = { 0, 2, 0 }, bshape = { 3, 4 } } },
    { name = 'slice_broadcast', opts = { s = { {}, { 1, 3 } }, bshape = { 2 } } },
  },
})

describe('F.scatter_add', function()
  it('computes known values', function()
    local y = F.scatter_add(T.zeros({ 3 }, 'float64'), { 0, 0, 2 }, T.array({ 1, 2, 3 }, 'float64'))
    assert.are.same({ 3, 0, 3 }, y.array:totable())
  end)
  it('rejects bad input', function()
    assert.error_matches(function() F.scatter_add(T.zeros({ 3 }), { 0 }, T.zeros({ 2 })) end, 'scatter_add: b of shape')
    assert.error_matches(function() F.scatter_add(T.zeros({ 3 }), { 0 }, T.zeros({ 1 }, 'float64')) end, 'scatter_add: a is float32 but b is float64')
  end)
end)

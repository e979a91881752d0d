-- F.get_item
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

local cases = {
  { name = 'int', opts = { s = { 1 } } },
  { name = 'slice', opts = { s = { {}, { 1, 3 } } } },
  { name = 'step_newaxis_ellipsis', opts = { s = { { nil, nil, 2 }, 'newaxis', '...', 0 } } },
  { name = 'negative_step', opts = { s = { { nil, nil, -1 }, { -1, 0, -2 } } } },
  { name = 'string', opts = { s = '::2, 1:' } },
  { name = 'int_array_dup', opts = { s = { T.ints({ 0, 2, 0 }) } } },
  { name = 'two_arrays', opts = { s = { T.ints({ 0, 2 }), {}, T.ints({ 1, 1 }) } } },
  { name = 'bool_mask', opts = { s = { { true, false, true, true } } } },
}
function_spec.describe('F.get_item', {
  fn = function(x, o) return F.get_item(x, o.s) end,
  inputs = function(dt) return { U(-1, 1, { 4, 5, 3 }, dt) } end,
  reference = function(x, o)
    if type(o.s) == 'string' or type(o.s[1]) == 'boolean' then return x:index(o.s) end
    return x:index(unpack(o.s))
  end,
  double_backward = true,
  cases = cases,
})

describe('F.get_item', function()
  it('accumulates the gradient of repeated positions', function()
    local x = chainer.Variable(T.arange(0, 3, 1, 'float64'))
    local y = F.get_item(x, { T.ints({ 0, 2, 0, 0 }) })
    assert.are.same({ 0, 2, 0, 0 }, y.array:totable())
    F.sum(y):backward()
    assert.are.same({ 3, 0, 1 }, x.grad:totable())
  end)
  it('takes one term without a table, 0-d results and noncontiguous inputs', function()
    local x = T.arange(0, 12, 1, 'float64'):reshape({ 3, 4 }):transpose()
    assert.are.same({ 0, 4, 8 }, F.get_item(x, 0).array:totable())
    assert.are.equal(9, F.get_item(x, { 1, 2 }).array:item())
    assert.are.same({ 1, 4, 3 }, F.get_item(x, 'None').shape)
  end)
  it('rejects bad terms', function()
    local x = T.zeros({ 3, 4 })
    assert.error_matches(function() F.get_item(x, { 5 }) end, 'out of')
    assert.error_matches(function() F.get_item(x, { T.array({ 0.5 }) }) end, 'get_item: index arrays must be integer')
    assert.error_matches(function() F.get_item(x, nil) end, 'get_item: slices is required')
    assert.error_matches(function() F.get_item(x, { T.ints({ 7 }) }) end, 'out of bounds')
  end)
end)

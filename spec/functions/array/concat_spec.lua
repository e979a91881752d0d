-- F.concat, F.stack, F.hstack, F.vstack, F.dstack
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

function_spec.describe('F.concat', {
  fn = function(a, b, c, opts) return F.concat({ a, b, c }, opts and opts.axis) end,
  inputs = function(dt, o)
    if o.axis == 0 then return { U(-1, 1, { 1, 3 }, dt), U(-1, 1, { 2, 3 }, dt), U(-1, 1, { 3, 3 }, dt) } end
    return { U(-1, 1, { 2, 1 }, dt), U(-1, 1, { 2, 3 }, dt), U(-1, 1, { 2, 2 }, dt) }
  end,
  reference = function(a, b, c, o) return T.concatenate({ a, b, c }, o.axis) end,
  double_backward = true,
  cases = { { name = 'axis0', opts = { axis = 0 } }, { name = 'axis1', opts = { axis = 1 } } },
})

function_spec.describe('F.stack', {
  fn = function(a, b, opts) return F.stack({ a, b }, opts.axis) end,
  inputs = function(dt) return { U(-1, 1, { 2, 3 }, dt), U(-1, 1, { 2, 3 }, dt) } end,
  reference = function(a, b, o) return T.stack({ a, b }, o.axis) end,
  double_backward = true,
  cases = { { name = 'axis0', opts = { axis = 0 } }, { name = 'axis2', opts = { axis = 2 } },
    { name = 'axis-1', opts = { axis = -1 } } },
})

for _, name in ipairs({ 'hstack', 'vstack', 'dstack' }) do
  function_spec.describe('F.' .. name, {
    fn = function(a, b) return F[name]({ a, b }) end,
    inputs = function(dt) return { U(-1, 1, { 2, 3 }, dt), U(-1, 1, { 2, 3 }, dt) } end,
    reference = function(a, b) return T[name]({ a, b }) end,
    double_backward = true,
  })
end

describe('F.concat and stacking', function()
  it('computes known values and shapes', function()
    local a = T.array({ { 1, 2 } }, 'float64')
    local b = T.array({ { 3, 4 }, { 5, 6 } }, 'float64')
    assert.are.same({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, F.concat({ a, b }, 0).array:totable())
    assert.are.same({ 1, 2, 3, 4 }, F.hstack({ T.array({ 1, 2 }), T.array({ 3, 4 }) }).array:totable())
    assert.are.same({ 2, 2 }, F.vstack({ T.array({ 1, 2 }), T.array({ 3, 4 }) }).shape)
    assert.are.same({ 1, 2, 2 }, F.dstack({ T.array({ 1, 2 }), T.array({ 3, 4 }) }).shape)
    assert.are.same({ 2, 1, 2 }, F.stack({ a, a }, { axis = 0 }).shape)
    assert.are.same({ 1, 2, 2 }, F.stack({ a, a }, -1).shape)
  end)
  it('accepts Chainer keyword form and single inputs', function()
    local a = T.ones({ 2, 3 })
    assert.are.same({ 2, 6 }, F.concat({ a, a }, { axis = 1 }).shape)
    assert.are.same({ 2, 3 }, F.concat({ a }).shape)
  end)
  it('rejects bad input', function()
    assert.has_error(function() F.concat({ T.ones({ 2, 3 }), T.ones({ 3, 3 }) }, 1) end)
    assert.error_matches(function() F.concat({ T.ones({ 2 }), T.ones({ 2 }, 'float64') }, 0) end, 'concat: .*dtype')
    assert.error_matches(function() F.concat({}, 0) end, 'concat: xs is empty')
    assert.error_matches(function() F.concat(T.ones({ 2 }), 0) end, 'concat: xs must be a Lua array')
    assert.error_matches(function() F.stack({ T.ones({ 2 }), T.ones({ 3 }) }) end, 'stack: xs%[2%] has shape')
    assert.error_matches(function() F.concat({ T.ones({ 2 }) }, 3) end, 'concat: axis 3 is out of range')
  end)
end)

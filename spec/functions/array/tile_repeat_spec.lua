-- F.tile, F.repeat_ / F['repeat'], F.flip, F.fliplr, F.flipud
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

function_spec.describe('F.tile', {
  fn = function(x, o) return F.tile(x, o.reps) end,
  inputs = function(dt) return { U(-1, 1, { 2, 3 }, dt) } end,
  reference = function(x, o) return T.tile(x, o.reps) end,
  double_backward = true,
  cases = { { name = 'r23', opts = { reps = { 2, 3 } } }, { name = 'r2', opts = { reps = 2 } },
    { name = 'r312', opts = { reps = { 3, 1, 2 } } } },
})
function_spec.describe('F.repeat', {
  fn = function(x, o) return F['repeat'](x, o.r, o.axis) end,
  inputs = function(dt) return { U(-1, 1, { 3, 2 }, dt) } end,
  reference = function(x, o) return T.repeat_(x, o.r, o.axis) end,
  double_backward = true,
  cases = { { name = 'scalar_axis1', opts = { r = 2, axis = 1 } }, { name = 'list_axis0', opts = { r = { 1, 2, 0 }, axis = 0 } },
    { name = 'flat', opts = { r = 2 } } },
})
for _, c in ipairs({ { 'flip', function(x) return F.flip(x, 1) end, function(x) return x:flip(1) end },
  { 'fliplr', F.fliplr, function(x) return x:flip(1) end }, { 'flipud', F.flipud, function(x) return x:flip(0) end } }) do
  function_spec.describe('F.' .. c[1], {
    fn = c[2], inputs = function(dt) return { U(-1, 1, { 2, 3, 2 }, dt) } end,
    reference = function(x) return c[3](x):copy() end, double_backward = true,
  })
end

describe('F.tile and F.repeat', function()
  it('compute known values', function()
    local x = T.array({ 1, 2 }, 'float64')
    assert.are.same({ 1, 2, 1, 2 }, F.tile(x, 2).array:totable())
    assert.are.same({ 1, 1, 2, 2 }, F.repeat_(x, { repeats = 2, axis = 0 }).array:totable())
    assert.are.same({ 2, 1 }, F.flip(x, 0).array:totable())
    local v = chainer.Variable(x)
    F.sum(F.repeat_(v, { 3, 1 }, 0)):backward()
    assert.are.same({ 3, 1 }, v.grad:totable())
  end)
  it('rejects bad input', function()
    assert.error_matches(function() F.tile(T.zeros({ 2 }), -1) end, 'tile: reps must hold non%-negative')
    assert.error_matches(function() F.repeat_(T.zeros({ 2 }), { 1, 2, 3 }, 0) end, 'repeat: repeats has 3 entries')
    assert.error_matches(function() F.fliplr(T.zeros({ 2 })) end, 'fliplr: x must be at least 2%-d')
  end)
end)

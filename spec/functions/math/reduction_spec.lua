-- F.max, F.min, F.argmax, F.argmin, F.mean, F.average, F.prod, F.logsumexp,
-- F.cumsum, F.cumprod
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

local function x234(dt) return { U(-2, 2, { 2, 3, 4 }, dt) } end
local axis_cases = {
  { name = 'all', opts = {} }, { name = 'axis1', opts = { axis = 1 } },
  { name = 'axis-1 keepdims', opts = { axis = -1, keepdims = true } }, { name = 'axes02', opts = { axis = { 0, 2 } } },
}

for _, name in ipairs({ 'max', 'min' }) do
  function_spec.describe('F.' .. name, {
    fn = function(x, o) return F[name](x, o) end, inputs = x234,
    reference = function(x, o) return T[name](x, o) end, double_backward = true, cases = axis_cases,
  })
end
function_spec.describe('F.mean', {
  fn = function(x, o) return F.mean(x, o) end, inputs = x234,
  reference = function(x, o) return T.mean(x, o) end, double_backward = true, cases = axis_cases,
})
function_spec.describe('F.prod', {
  fn = function(x, o) return F.prod(x, o) end,
  inputs = function(dt) return { U(0.5, 1.5, { 2, 3, 4 }, dt) * T.sign(U(-1, 1, { 2, 3, 4 }, dt)) } end,
  reference = function(x, o) return T.prod(x, o) end, double_backward = true, cases = axis_cases,
})
function_spec.describe('F.logsumexp', {
  fn = function(x, o) return F.logsumexp(x, o) end, inputs = x234,
  reference = function(x, o)
    return T.log(T.sum(T.exp(x), { axis = o.axis }))
  end,
  double_backward = true,
  cases = { { name = 'all', opts = {} }, { name = 'axis1', opts = { axis = 1 } }, { name = 'axes02', opts = { axis = { 0, 2 } } } },
})
function_spec.describe('F.average (weights)', {
  fn = function(x, w, o) return F.average(x, { axis = o.axis, weights = w }) end,
  inputs = function(dt, o) return { U(-1, 1, { 3, 4 }, dt), U(0.5, 1.5, o.wshape, dt) } end,
  reference = function(x, w, o)
    local wb = #o.wshape == 1 and w:reshape({ 1, 4 }) or w
    return T.sum(x * wb, { axis = o.axis }) / T.sum(wb:broadcast_to({ 3, 4 }), { axis = o.axis })
  end,
  double_backward = true,
  cases = { { name = '1-d weights', opts = { axis = 1, wshape = { 4 } } },
    { name = 'full weights, all', opts = { wshape = { 3, 4 } } } },
})
for _, name in ipairs({ 'cumsum', 'cumprod' }) do
  function_spec.describe('F.' .. name, {
    fn = function(x, o) return F[name](x, o) end,
    inputs = function(dt) return { U(0.5, 1.5, { 3, 4 }, dt) } end,
    reference = function(x, o) return T[name](x, o.axis) end, double_backward = true,
    cases = { { name = 'axis1', opts = { axis = 1 } }, { name = 'axis0', opts = { axis = 0 } },
      { name = 'flat', opts = {} } },
  })
end

describe('reductions', function()
  it('max sends the gradient to every tied maximum (Chainer)', function()
    local x = chainer.Variable(T.array({ 1, 3, 3, 2 }, 'float64'))
    F.max(x):backward()
    assert.are.same({ 0, 1, 1, 0 }, x.grad:totable())
  end)
  it('argmax/argmin are int32, unconnected, 0-based', function()
    local x = T.array({ { 1, 5, 2 }, { 7, 0, 7 } }, 'float64')
    local a = F.argmax(x, { axis = 1 })
    assert.are.equal('int32', a.dtype)
    assert.are.same({ 1, 0 }, a.array:totable())
    assert.are.equal(3, F.argmax(x).array:item())
    assert.are.same({ 0, 1, 0 }, F.argmin(x, { axis = 0 }).array:totable())
    assert.is_nil(a.creator)
  end)
  it('prod and cumprod gradients are exact with zeros', function()
    local x = chainer.Variable(T.array({ { 2, 0, 3 }, { 0, 0, 4 } }, 'float64'))
    F.sum(F.prod(x, { axis = 1 })):backward()
    assert.are.same({ { 0, 6, 0 }, { 0, 0, 0 } }, x.grad:totable())
    local c = chainer.Variable(T.array({ 2, 0, 3 }, 'float64'))
    F.sum(F.cumprod(c)):backward()
    -- y = (2, 0, 0): dy/dx0 = 1, dy/dx1 = 2 + 2*3, dy/dx2 = 0
    assert.are.same({ 1, 8, 0 }, c.grad:totable())
  end)
  it('average returns the sum of weights with returned = true', function()
    local x = T.array({ { 1, 2 }, { 3, 4 } }, 'float64')
    local w = T.array({ 1, 3 }, 'float64')
    local avg, sw = F.average(x, { axis = 1, weights = w, returned = true })
    assert.are.same({ 1.75, 3.75 }, avg.array:totable())
    assert.are.same({ 4, 4 }, sw.array:totable())
    local m, n = F.mean(x, { returned = true })
    assert.are.equal(2.5, m.array:item())
    assert.are.equal(4, n.array:item())
  end)
  it('logsumexp is stable', function()
    local y = F.logsumexp(T.array({ 1000, 1000 }, 'float64')).array:item()
    assert.is_true(math.abs(y - (1000 + math.log(2))) < 1e-10)
  end)
  it('rejects bad inputs', function()
    local x = T.zeros({ 2, 3 })
    assert.error_matches(function() F.max(x, { axis = 2 }) end, 'max: axis 2 is out of range for a 2%-d input')
    assert.error_matches(function() F.max(T.zeros({ 0 })) end, 'max: x is empty')
    assert.error_matches(function() F.average(x, { axis = 1, weights = T.zeros({ 2 }) }) end,
      'average: weights has length 2, expected x.shape%[1%] = 3')
    assert.error_matches(function() F.cumsum(x, { axis = 5 }) end, 'cumsum: axis 5 is out of range')
    assert.error_matches(function() F.prod(x, { axis = { 0, 0 } }) end, 'prod: axis 0 is given twice')
  end)
end)

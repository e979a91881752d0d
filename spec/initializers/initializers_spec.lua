-- chainer.initializers: values, statistics, fans, dtype handling, errors.
local chainer = require 'chainer'
local T = chainer.tensor
local I = chainer.initializers

local function std_of(t) return math.sqrt((t:astype('float64') ^ 2):mean():item()) end

describe('initializers', function()
  it('get_fans as Chainer: (out, in, k...)', function()
    assert.same({ 3 * 25, 4 * 25 }, { I.get_fans({ 4, 3, 5, 5 }) })
    assert.same({ 7, 2 }, { I.get_fans({ 2, 7 }) })
    assert.has_error(function() I.get_fans({ 3 }) end, 'get_fans: the shape must have at least 2 dimensions (got (3,))')
  end)

  it('Constant, Zero, One, NaN, Identity', function()
    local a = T.empty({ 2, 2 })
    I.Constant(2.5)(a)
    assert.same({ { 2.5, 2.5 }, { 2.5, 2.5 } }, a:totable())
    I.Constant(T.array({ 1, 2 }))(a)                       -- broadcast
    assert.same({ { 1, 2 }, { 1, 2 } }, a:totable())
    I.Zero()(a); assert.equal(0, a:abs():sum():item())
    I.One()(a); assert.equal(4, a:sum():item())
    I.NaN()(a); assert.is_true(a:isnan():all():item())
    I.Identity(3)(a)
    assert.same({ { 3, 0 }, { 0, 3 } }, a:totable())
    assert.has_error(function() I.Identity()(T.empty({ 2, 3 })) end)
    assert.has_error(function() I.Constant(T.ones({ 3 }))(a) end)
    -- 0-d and empty arrays
    local z = T.empty({})
    I.Constant(4)(z)
    assert.equal(4, z:item())
    I.Normal()(T.empty({ 0, 3 }))
  end)

  it('dtype is enforced and used by generate_array', function()
    assert.has_error(function() I.Constant(1, 'float64')(T.empty({ 2 })) end,
      'Constant: the array is float32 but this initializer makes float64')
    local g = I.generate_array(I.Normal(1, 'float64'), { 3 })
    assert.equal('float64', g.dtype)
    assert.equal('float32', I.generate_array(I.One(), { 2 }).dtype)
    assert.equal('float64', I.generate_array(I.One(), 2, 'float64').dtype)
  end)

  it('normal family standard deviations', function()
    T.random.seed(0)
    local shape = { 200, 100, 3, 3 }                       -- fan_in 900, fan_out 1800
    local function s(init) local a = T.empty(shape); init(a); return std_of(a) end
    assert.is_true(math.abs(s(I.Normal(0.2)) - 0.2) < 0.003)
    assert.is_true(math.abs(s(I.LeCunNormal()) - math.sqrt(1 / 900)) < 0.0005)
    assert.is_true(math.abs(s(I.GlorotNormal()) - math.sqrt(2 / 2700)) < 0.0005)
    assert.is_true(math.abs(s(I.HeNormal()) - math.sqrt(2 / 900)) < 0.0005)
    assert.is_true(math.abs(s(I.HeNormal(1, nil, 'fan_out')) - math.sqrt(2 / 1800)) < 0.0005)
    assert.is_true(math.abs(s(I.LeCunNormal(2)) - 2 * math.sqrt(1 / 900)) < 0.001)
  end)

  it('uniform family bounds', function()
    local shape = { 50, 40 }                               -- fan_in 40, fan_out 50
    local function bound(init) local a = T.empty(shape); init(a); return a:abs():max():item() end
    local function check(init, b)
      local m = bound(init)
      assert.is_true(m <= b and m > 0.9 * b, tostring(init) .. ' ' .. m .. ' vs ' .. b)
    end
    check(I.Uniform(0.3), 0.3)
    check(I.LeCunUniform(), math.sqrt(3 / 40))
    check(I.GlorotUniform(), math.sqrt(6 / 90))
    check(I.HeUniform(), math.sqrt(6 / 40))
  end)

  it('Orthogonal gives orthonormal rows (or columns) times scale', function()
    for _, shape in ipairs({ { 3, 5 }, { 5, 3 }, { 4, 2, 2 } }) do
      local a = T.empty(shape, 'float64')
      I.Orthogonal(1.5)(a)
      local m = a:reshape({ shape[1], -1 })
      local g = shape[1] <= m.shape[2] and T.matmul(m, m:transpose()) or T.matmul(m:transpose(), m)
      local n = g.shape[1]
      local want = T.eye(n, n, 0, 'float64') * 2.25
      assert.is_true((g - want):abs():max():item() < 1e-10)
    end
    assert.has_error(function() I.Orthogonal()(T.empty({ 2 }, 'int32')) end)
  end)

  it('float initializers reject integer arrays', function()
    assert.has_error(function() I.Normal()(T.empty({ 2, 2 }, 'int32')) end,
      'Normal: the array must have a float dtype (got int32)')
    assert.has_error(function() I.Normal()(3) end)
  end)

  it('links accept nil, numbers, tensors and initializers', function()
    local L = chainer.links
    assert.equal(3, L.Linear(2, 2, { initialW = 3 }).W.array:get(0, 0))
    assert.same({ { 1, 2 } }, L.Linear(2, 1, { initialW = T.array({ { 1, 2 } }) }).W.array:totable())
    assert.equal(1, L.Linear(2, 2, { initialW = I.One() }).W.array:get(1, 1))
    assert.has_error(function() L.Linear(2, 2, { initialW = 'x' }) end)
  end)
end)

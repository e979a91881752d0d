-- F.dropout, F.gaussian, F.gumbel_softmax, F.simplified_dropconnect, F.zoneout
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'

local function mask_like(shape, dt) return T.ge(T.random.rand(shape, 'float64'), 0.5):astype(dt) * 2 end

-- constant (non-differentiated) tensors are closed over, not passed as inputs
local fixed = {}

function_spec.describe('F.dropout (given mask)', {
  fn = function(x) return F.dropout(x, { ratio = 0.5, mask = fixed.m }) end,
  inputs = function(dt) fixed.m = mask_like({ 3, 4 }, dt); return { T.random.randn({ 3, 4 }, dt) } end,
  reference = function(x) return x * fixed.m end,
  double_backward = true,
})

function_spec.describe('F.gaussian (given eps)', {
  fn = function(m, v) return F.gaussian(m, v, { eps = fixed.e }) end,
  inputs = function(dt)
    fixed.e = T.random.randn({ 3, 4 }, dt)
    return { T.random.randn({ 3, 4 }, dt), T.random.randn({ 3, 4 }, dt) }
  end,
  reference = function(m, v) return m + T.exp(v * 0.5) * fixed.e end,
  double_backward = true,
})

function_spec.describe('F.simplified_dropconnect (given batchwise mask)', {
  fn = function(x, W, b) return F.simplified_dropconnect(x, W, b, { ratio = 0.25, mask = fixed.dm }) end,
  inputs = function(dt)
    fixed.dm = T.ge(T.random.rand({ 2, 4, 3 }, 'float64'), 0.25):astype(dt)
    return { T.random.randn({ 2, 3 }, dt), T.random.randn({ 4, 3 }, dt), T.random.randn({ 4 }, dt) }
  end,
  reference = function(x, W, b)
    local Wm = W:reshape({ 1, 4, 3 }) * fixed.dm / 0.75
    return T.sum(Wm * x:reshape({ 2, 1, 3 }), { axis = 2 }) + b:reshape({ 1, 4 })
  end,
  double_backward = true,
})

function_spec.describe('F.zoneout (ratio 0 and 1)', {
  fn = function(h, x, o) return F.zoneout(h, x, o) end,
  inputs = function(dt) return { T.random.randn({ 3, 4 }, dt), T.random.randn({ 3, 4 }, dt) } end,
  reference = function(h, x, o) return o.ratio == 1 and h or x end,
  double_backward = true,
  cases = { { name = 'ratio 0 keeps x', opts = { ratio = 0 } }, { name = 'ratio 1 keeps h', opts = { ratio = 1 } } },
})

describe('F.dropout', function()
  it('returns the input Variable itself in test mode', function()
    local x = chainer.Variable(T.random.randn({ 3, 4 }))
    chainer.using_config('train', false, function()
      assert.are.equal(x, F.dropout(x))
      local y, m = F.dropout(x, { return_mask = true })
      assert.are.equal(x, y)
      assert.is_nil(m)
    end)
  end)
  it('draws a scaled 0 / (1 / (1 - ratio)) mask in training, reproducible by seed', function()
    T.random.seed(3)
    local x = T.ones({ 200, 50 }, 'float64')
    local y, m = F.dropout(x, 0.2, { return_mask = true })
    local vals = {}
    for _, v in ipairs(m:reshape({ -1 }):totable()) do vals[v] = true end
    assert.is_true(vals[0] and vals[1.25] and true or false)
    local kept = T.sum(T.ne(m, 0)):item() / 10000
    assert.is_true(math.abs(kept - 0.8) < 0.03)
    chainer.testing.assert_allclose(y.array, m, { atol = 0 })
    T.random.seed(3)
    local _, m2 = F.dropout(x, 0.2, { return_mask = true })
    assert.are.same(m:totable(), m2:totable())
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.dropout(T.zeros({ 2 }), 1) end, 'dropout: ratio must be a number in %[0, 1%)')
    assert.error_matches(function() F.dropout(T.zeros({ 2 }), { mask = T.zeros({ 3 }) }) end, 'dropout: mask has shape')
    assert.error_matches(function() F.dropout(T.zeros({ 2 }, 'int32')) end, 'dropout: x must be a float tensor')
  end)
end)

describe('F.gaussian / F.gumbel_softmax / F.zoneout / F.simplified_dropconnect', function()
  it('gaussian samples mean + exp(ln_var / 2) * eps and returns eps on request', function()
    local m, v = T.full({ 4000 }, 1, 'float64'), T.full({ 4000 }, math.log(4), 'float64')
    local y, eps = F.gaussian(m, v, { return_eps = true })
    chainer.testing.assert_allclose(y.array, m + eps * 2, { atol = 1e-12 })
    local mean = T.sum(y.array):item() / 4000
    assert.is_true(math.abs(mean - 1) < 0.15)
  end)
  it('gumbel_softmax gives probability rows (and 1 for 0-d input)', function()
    local y = F.gumbel_softmax(T.random.randn({ 5, 3 }, 'float64'), { tau = 0.5 })
    chainer.testing.assert_allclose(T.sum(y.array, { axis = 1 }), T.ones({ 5 }, 'float64'), { atol = 1e-12 })
    assert.are.equal(1, F.gumbel_softmax(T.array(0.3, 'float64')).array:item())
    assert.error_matches(function() F.gumbel_softmax(T.zeros({ 2, 2 }), { tau = 0 }) end,
      'gumbel_softmax: tau must be a positive number')
  end)
  it('zoneout mixes h and x elementwise in training and returns x in test mode', function()
    local h, x = T.zeros({ 100, 10 }, 'float64'), T.ones({ 100, 10 }, 'float64')
    local y = F.zoneout(h, x, { ratio = 0.3 }).array
    local frac = T.sum(y):item() / 1000
    assert.is_true(math.abs(frac - 0.7) < 0.06)
    local xv = chainer.Variable(x)
    chainer.using_config('train', false, function() assert.are.equal(xv, F.zoneout(h, xv)) end)
    assert.error_matches(function() F.zoneout(h, T.ones({ 3 }, 'float64')) end, 'zoneout: h')
  end)
  it('simplified_dropconnect is the plain linear layer with train = false', function()
    local x, W, b = T.random.randn({ 2, 3 }, 'float64'), T.random.randn({ 4, 3 }, 'float64'), T.random.randn({ 4 }, 'float64')
    local y = F.simplified_dropconnect(x, W, b, { train = false })
    chainer.testing.assert_allclose(y.array, T.matmul(x, W:transpose()) + b, { atol = 1e-12 })
    local m = T.ge(T.random.rand({ 4, 3 }, 'float64'), 0.5):astype('float64')
    local y2 = F.simplified_dropconnect(x, W, nil, { mask = m, use_batchwise_mask = false })
    chainer.testing.assert_allclose(y2.array, T.matmul(x, (W * m * 2):transpose()), { atol = 1e-12 })
    assert.error_matches(function() F.simplified_dropconnect(x, T.zeros({ 4, 5 }, 'float64')) end,
      'simplified_dropconnect: x %(2, 3%) does not flatten')
  end)
end)

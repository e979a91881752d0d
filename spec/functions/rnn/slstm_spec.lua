-- F.slstm: two child LSTM states merged (Chainer's S-LSTM).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

local function gates(x, Un)
  local shape = { x.shape[1], Un, 4 }
  for d = 3, #x.shape do shape[#shape + 1] = x.shape[d] end
  local r = x:reshape(shape)
  return r:slice(':, :, 0'), r:slice(':, :, 1'), r:slice(':, :, 2'), r:slice(':, :, 3')
end

local function ref_slstm(c1, c2, x1, x2)
  local Un = c1.shape[2]
  local a1, i1, f1, o1 = gates(x1, Un)
  local a2, i2, f2, o2 = gates(x2, Un)
  local c = T.tanh(a1) * T.sigmoid(i1) + T.tanh(a2) * T.sigmoid(i2) + T.sigmoid(f1) * c1 + T.sigmoid(f2) * c2
  local h = T.sigmoid(o1 + o2) * T.tanh(c)
  return { c, h }
end

function_spec.describe('F.slstm', {
  fn = function(c1, c2, x1, x2) local c, h = F.slstm(c1, c2, x1, x2) return { c, h } end,
  inputs = function(dt, o)
    return { U(-1, 1, o.cshape, dt), U(-1, 1, o.cshape, dt), U(-2, 2, o.xshape, dt), U(-2, 2, o.xshape, dt) }
  end,
  reference = ref_slstm,
  double_backward = true,
  cases = {
    { name = 'basic', opts = { cshape = { 2, 3 }, xshape = { 2, 12 } } },
    { name = 'trailing axes', opts = { cshape = { 2, 2, 2 }, xshape = { 2, 8, 2 } } },
  },
})

describe('F.slstm', function()
  it('matches hand-computed values', function()
    local sig = function(v) return 1 / (1 + math.exp(-v)) end
    local c, h = F.slstm(T.array({ { 0.2 } }, 'float64'), T.array({ { -0.4 } }, 'float64'),
      T.array({ { 0.1, 0.2, 0.3, 0.4 } }, 'float64'), T.array({ { -0.5, 0.6, -0.7, 0.8 } }, 'float64'))
    local cv = math.tanh(0.1) * sig(0.2) + math.tanh(-0.5) * sig(0.6) + sig(0.3) * 0.2 + sig(-0.7) * -0.4
    assert.is_true(math.abs(c.array:item() - cv) < 1e-12)
    assert.is_true(math.abs(h.array:item() - sig(1.2) * math.tanh(cv)) < 1e-12)
  end)

  it('rejects bad inputs with clear errors', function()
    local c = T.zeros({ 2, 3 }, 'float32')
    local x = T.zeros({ 2, 12 }, 'float32')
    local ok, err = pcall(F.slstm, c, c, x, T.zeros({ 2, 8 }, 'float32'))
    assert.is_false(ok)
    assert.matches('slstm: x2', err)
    ok, err = pcall(F.slstm, c, T.zeros({ 2, 4 }, 'float32'), x, x)
    assert.matches('slstm: c_prev2', err)
    ok, err = pcall(F.slstm, c, c, T.zeros({ 2, 10 }, 'float32'), x)
    assert.matches('slstm: x1', err)
    ok, err = pcall(F.slstm, c, c, x, T.zeros({ 2, 12 }, 'float64'))
    assert.matches('slstm: .*dtypes', err)
  end)
end)

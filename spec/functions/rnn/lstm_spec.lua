-- F.lstm: Chainer's LSTM cell (gates interleaved per unit), with batch
-- shrinking (c_prev longer than x), trailing axes, first and second order
-- gradients.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'
local U = T.random.uniform

-- Reference from tensor ops: x.reshape(B, U, 4, ...) gives a, i, f, o.
local function ref_lstm(c_prev, x)
  local B, Un = x.shape[1], c_prev.shape[2]
  local shape = { B, Un, 4 }
  for d = 3, #x.shape do shape[#shape + 1] = x.shape[d] end
  local r = x:reshape(shape)
  local a, i = T.tanh(r:slice(':, :, 0')), T.sigmoid(r:slice(':, :, 1'))
  local f, o = T.sigmoid(r:slice(':, :, 2')), T.sigmoid(r:slice(':, :, 3'))
  local Bc = c_prev.shape[1]
  local cp = c_prev:slice({ 0, B })
  local c = a * i + f * cp
  local h = o * T.tanh(c)
  if Bc > B then c = T.concat({ c, c_prev:slice({ B, Bc }) }, 0) end
  return { c, h }
end

function_spec.describe('F.lstm', {
  fn = function(c, x) local c2, h = F.lstm(c, x) return { c2, h } end,
  inputs = function(dt, o) return { U(-1, 1, o.cshape, dt), U(-2, 2, o.xshape, dt) } end,
  reference = ref_lstm,
  double_backward = true,
  cases = {
    { name = 'basic', opts = { cshape = { 3, 4 }, xshape = { 3, 16 } } },
    { name = 'shrinking batch', opts = { cshape = { 4, 3 }, xshape = { 2, 12 } } },
    { name = 'trailing axes', opts = { cshape = { 2, 2, 3 }, xshape = { 2, 8, 3 } } },
    { name = 'one unit', opts = { cshape = { 1, 1 }, xshape = { 1, 4 } } },
  },
})

describe('F.lstm', function()
  it('matches hand-computed values', function()
    -- one unit: a = 0.5, i = 1, f = -1, o = 2, c_prev = 0.3
    local c, h = F.lstm(T.array({ { 0.3 } }, 'float64'), T.array({ { 0.5, 1, -1, 2 } }, 'float64'))
    local sig = function(v) return 1 / (1 + math.exp(-v)) end
    local cv = math.tanh(0.5) * sig(1) + sig(-1) * 0.3
    assert.is_true(math.abs(c.array:item() - cv) < 1e-12)
    assert.is_true(math.abs(h.array:item() - sig(2) * math.tanh(cv)) < 1e-12)
  end)

  it('passes the rows of c_prev beyond x through, with their gradient', function()
    local cp = chainer.Variable(T.array({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, 'float32'))
    local x = chainer.Variable(U(-1, 1, { 1, 8 }, 'float32'))
    local c, h = F.lstm(cp, x)
    assert.are.same({ 3, 2 }, c.shape)
    assert.are.same({ 1, 2 }, h.shape)
    assert.are.same({ { 3, 4 }, { 5, 6 } }, c.array:slice({ 1, 3 }):totable())
    F.sum(c):backward()
    assert.are.same({ { 1, 1 }, { 1, 1 } }, cp.grad:slice({ 1, 3 }):totable())
  end)

  it('works with only one output used (the other gradient is zero)', function()
    local cp = chainer.Variable(U(-1, 1, { 2, 3 }, 'float64'))
    local x = chainer.Variable(U(-1, 1, { 2, 12 }, 'float64'))
    local _, h = F.lstm(cp, x)
    F.sum(h):backward()
    local cp2 = chainer.Variable(cp.array:copy())
    local x2 = chainer.Variable(x.array:copy())
    local c2, h2 = F.lstm(cp2, x2)
    F.sum(h2 + c2 * 0):backward()
    testing.assert_allclose(cp.grad, cp2.grad)
    testing.assert_allclose(x.grad, x2.grad)
  end)

  it('accepts non-contiguous inputs', function()
    local cp = U(-1, 1, { 2, 2 }, 'float64'):transpose()
    local x = U(-1, 1, { 8, 2 }, 'float64'):transpose()
    local c, h = F.lstm(cp, x)
    local r = ref_lstm(cp:copy(), x:copy())
    testing.assert_allclose(c.array, r[1])
    testing.assert_allclose(h.array, r[2])
  end)

  it('supports float16 (computed in float32)', function()
    local cp, x = U(-1, 1, { 2, 3 }, 'float32'), U(-1, 1, { 2, 12 }, 'float32')
    local vc, vx = chainer.Variable(cp:astype('float16')), chainer.Variable(x:astype('float16'))
    local c, h = F.lstm(vc, vx)
    assert.are.equal('float16', c.dtype)
    local r = ref_lstm(cp:astype('float16'):astype('float32'), x:astype('float16'):astype('float32'))
    testing.assert_allclose(h.array:astype('float32'), r[2], { atol = 2e-3, rtol = 1e-2 })
    F.sum(h):backward()
    assert.are.equal('float16', vx.grad.dtype)
  end)

  it('rejects bad inputs with clear errors', function()
    local c = T.zeros({ 2, 3 }, 'float32')
    assert.has_error(function() F.lstm(c, T.zeros({ 2, 11 }, 'float32')) end)
    local ok, err = pcall(F.lstm, c, T.zeros({ 2, 11 }, 'float32'))
    assert.is_false(ok)
    assert.matches('lstm', err)
    ok, err = pcall(F.lstm, c, T.zeros({ 3, 12 }, 'float32'))
    assert.matches('lstm: x', err)
    ok, err = pcall(F.lstm, c, T.zeros({ 2, 12 }, 'float64'))
    assert.matches('lstm: c_prev and x have different dtypes', err)
    ok, err = pcall(F.lstm, c, T.zeros({ 2, 12 }, 'int32'))
    assert.matches('lstm: x must be a float tensor', err)
    ok, err = pcall(F.lstm, T.zeros({ 3 }, 'float32'), T.zeros({ 12 }, 'float32'))
    assert.matches('lstm: c_prev must be at least 2%-d', err)
  end)
end)

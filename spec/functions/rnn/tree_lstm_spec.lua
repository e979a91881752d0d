-- F.tree_lstm: N-ary Tree-LSTM cell, gates in contiguous blocks
-- (x.reshape(B, 3 + N, U) gives a, i, o, f1 .. fN).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

-- (the harness passes the case options last; they are dropped here)
local function ref_tree(...)
  local args = { ... }
  args[#args] = nil
  local n = #args
  local x = args[n]
  local N = n - 1
  local Un = args[1].shape[2]
  local shape = { x.shape[1], 3 + N, Un }
  for d = 3, #x.shape do shape[#shape + 1] = x.shape[d] end
  local r = x:reshape(shape)
  local g = function(k) return r:slice(':, ' .. k) end
  local c = T.tanh(g(0)) * T.sigmoid(g(1))
  for k = 1, N do c = c + T.sigmoid(g(2 + k)) * args[k] end
  return { c, T.sigmoid(g(2)) * T.tanh(c) }
end

function_spec.describe('F.tree_lstm', {
  fn = function(...)
    local args = { ... }
    local n = #args - 1
    local c, h = F.tree_lstm(unpack(args, 1, n))
    return { c, h }
  end,
  inputs = function(dt, o)
    local xs = {}
    for k = 1, o.n do xs[k] = U(-1, 1, o.cshape, dt) end
    local xshape = { o.cshape[1], (3 + o.n) * o.cshape[2] }
    for d = 3, #o.cshape do xshape[d] = o.cshape[d] end
    xs[o.n + 1] = U(-2, 2, xshape, dt)
    return xs
  end,
  reference = ref_tree,
  double_backward = true,
  cases = {
    { name = 'binary', opts = { n = 2, cshape = { 2, 3 } } },
    { name = 'unary', opts = { n = 1, cshape = { 3, 2 } } },
    { name = 'ternary, trailing axis', opts = { n = 3, cshape = { 2, 2, 2 } } },
  },
})

describe('F.tree_lstm', function()
  it('matches hand-computed values', function()
    local sig = function(v) return 1 / (1 + math.exp(-v)) end
    -- gates a, i, o, f1, f2 = 0.1, 0.2, 0.3, 0.4, 0.5
    local c, h = F.tree_lstm(T.array({ { 1.5 } }, 'float64'), T.array({ { -2 } }, 'float64'),
      T.array({ { 0.1, 0.2, 0.3, 0.4, 0.5 } }, 'float64'))
    local cv = math.tanh(0.1) * sig(0.2) + sig(0.4) * 1.5 + sig(0.5) * -2
    assert.is_true(math.abs(c.array:item() - cv) < 1e-12)
    assert.is_true(math.abs(h.array:item() - sig(0.3) * math.tanh(cv)) < 1e-12)
  end)

  it('rejects bad inputs with clear errors', function()
    local c = T.zeros({ 2, 3 }, 'float32')
    local ok, err = pcall(F.tree_lstm, c, c, T.zeros({ 2, 12 }, 'float32'))
    assert.is_false(ok)
    assert.matches('tree_lstm: x', err)
    ok, err = pcall(F.tree_lstm, c)
    assert.matches('tree_lstm: needs', err)
    ok, err = pcall(F.tree_lstm, c, T.zeros({ 2, 4 }, 'float32'), T.zeros({ 2, 15 }, 'float32'))
    assert.matches('tree_lstm: c2', err)
  end)
end)

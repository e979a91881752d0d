local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'

local samples = T.array({ { 0, 4 }, { 1, 0 }, { 2, 2 } }, 'int32')

local function reference(x, W, t, o)
  local pos = T.sum(T.take(W, t:astype('int64'), 0) * x, { axis = 1 })                     -- (B,)
  local neg = T.sum(T.take(W, samples:astype('int64'), 0) * x:reshape({ 3, 1, 4 }), { axis = 2 }) -- (B, S)
  local logz = T.logsumexp(T.concatenate({ pos:reshape({ 3, 1 }), neg }, 1), { axis = 1 })
  local ny = T.exp(neg - logz:reshape({ 3, 1 }))
  local l = -(pos - logz + T.sum(T.log(1 - ny), { axis = 1 }))
  if o.reduce == 'no' then return l end
  return T.mean(l)
end

function_spec.describe('F.black_out', {
  fn = function(x, W, t, o) return F.black_out(x, t, W, samples, o) end,
  inputs = function(dtype)
    -- labels last: the harness pairs second-order seeds with the float inputs in order
    return { T.random.uniform(-1, 1, { 3, 4 }, dtype), T.random.uniform(-1, 1, { 5, 4 }, dtype), T.array({ 1, 2, 3 }, 'int32') }
  end,
  reference = reference,
  double_backward = true,
  cases = { { name = 'mean', opts = {} }, { name = 'no', opts = { reduce = 'no' } } },
})

describe('F.black_out', function()
  it('rejects bad labels and shapes', function()
    local x, W = T.zeros({ 3, 4 }, 'float32'), T.zeros({ 5, 4 }, 'float32')
    local ok, e = pcall(F.black_out, x, T.array({ 1, 2, 5 }, 'int32'), W, samples)
    assert.is_truthy(tostring(e):find('black_out: label t[2]', 1, true))
    ok, e = pcall(F.black_out, x, T.array({ 1, 2, 3 }, 'int32'), W, T.zeros({ 2, 2 }, 'int32'))
    assert.is_truthy(tostring(e):find('samples must have shape (3, S)', 1, true))
    ok, e = pcall(F.black_out, x, T.array({ 1, 2, 3 }, 'int32'), W, samples:astype('float32'))
    assert.is_truthy(tostring(e):find('samples must be an integer tensor', 1, true))
  end)
end)

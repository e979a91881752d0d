local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'

local fixed = T.array({ { 0, 2, 4 }, { 1, 1, 3 }, { 0, 0, 2 } }, 'int32')
local function sampler(shape) return fixed:copy() end

local function reference(x, W, t, o)
  local xt, tt, wt, st = x:totable(), t:totable(), W:totable(), fixed:totable()
  local out = {}
  for i = 1, #xt do
    local l = 0
    if tt[i] ~= -1 then
      for k = 1, 3 do
        local id = k == 1 and tt[i] or st[i][k]
        local dot = 0
        for d = 1, #xt[i] do dot = dot + wt[id + 1][d] * xt[i][d] end
        if k == 1 then dot = -dot end
        l = l + math.log(1 + math.exp(dot))
      end
    end
    out[i] = l
  end
  local r = T.array(out, x.dtype)
  if o.reduce == 'no' then return r end
  return T.sum(r)
end

function_spec.describe('F.negative_sampling', {
  fn = function(x, W, t, o) return F.negative_sampling(x, t, W, sampler, 2, { reduce = o.reduce }) end,
  inputs = function(dtype)
    -- labels last: the harness pairs second-order seeds with the float inputs in order
    return { T.random.uniform(-1, 1, { 3, 4 }, dtype), T.random.uniform(-1, 1, { 5, 4 }, dtype), T.array({ 1, -1, 3 }, 'int32') }
  end,
  reference = reference,
  double_backward = true,
  cases = { { name = 'sum', opts = {} }, { name = 'no', opts = { reduce = 'no' } } },
})

describe('F.negative_sampling', function()
  it('return_samples puts t in column 0; accepts a WalkerAlias', function()
    T.random.seed(5)
    local wa = chainer.utils.WalkerAlias({ 1, 1, 1, 1, 1 })
    local _, s = F.negative_sampling(T.zeros({ 2, 4 }, 'float32'), T.array({ 3, 4 }, 'int32'), T.zeros({ 5, 4 }, 'float32'),
      wa, 6, { return_samples = true })
    assert.are.same({ 2, 7 }, s.shape)
    assert.are.same({ 3, 4 }, s:slice({}, 0):totable())
    -- all-zero embeddings: every term is log 2
    local y = F.negative_sampling(T.zeros({ 2, 4 }, 'float64'), T.array({ 3, 4 }, 'int32'), T.zeros({ 5, 4 }, 'float64'), wa, 6)
    testing.assert_allclose(y.array, T.array(14 * math.log(2), 'float64'))
  end)
  it('rejects bad labels and arguments', function()
    local x, W = T.zeros({ 2, 4 }, 'float32'), T.zeros({ 5, 4 }, 'float32')
    local ok, e = pcall(F.negative_sampling, x, T.array({ 5, 0 }, 'int32'), W, sampler, 2)
    assert.is_truthy(tostring(e):find('negative_sampling: label t[0]', 1, true))
    ok, e = pcall(F.negative_sampling, x, T.array({ 1, 0 }, 'float32'), W, sampler, 2)
    assert.is_truthy(tostring(e):find('t must be an integer tensor', 1, true))
    ok, e = pcall(F.negative_sampling, x, T.array({ 1, 0 }, 'int32'), T.zeros({ 5, 3 }, 'float32'), sampler, 2)
    assert.is_truthy(tostring(e):find('W must have 4 columns', 1, true))
    ok, e = pcall(F.negative_sampling, x, T.array({ 1, 0 }, 'int32'), W, 42, 2)
    assert.is_truthy(tostring(e):find('sampler must be a function', 1, true))
  end)
end)

-- crf1d and argmax_crf1d against brute-force enumeration of all label
-- sequences, with sequences of different lengths.
local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'

local K = 3

-- emissions for sequence b: xs[t][b] while b < B_t
local function seq_score(cost, xs, b, labels)
  local s = 0
  for t = 1, #labels do
    s = s + xs[t][b][labels[t] + 1]
    if t > 1 then s = s + cost[labels[t - 1] + 1][labels[t] + 1] end
  end
  return s
end

local function enumerate(n, fn)
  local lab = {}
  local function rec(t)
    if t > n then fn(lab) return end
    for k = 0, K - 1 do lab[t] = k; rec(t + 1) end
    lab[t] = nil
  end
  rec(1)
end

local function lengths(xs)
  local len = {}
  for t = 1, #xs do for b = 1, #xs[t] do len[b] = (len[b] or 0) + 1 end end
  return len
end

local function reference(cost, xs, ys, reduce)
  local c = cost:totable()
  local xt, yt = {}, {}
  for t = 1, #xs do xt[t] = xs[t]:totable(); yt[t] = ys[t]:totable() end
  local len = lengths(xt)
  local losses = {}
  for b = 1, #len do
    local z = 0
    enumerate(len[b], function(lab) z = z + math.exp(seq_score(c, xt, b, lab)) end)
    local gold = {}
    for t = 1, len[b] do gold[t] = yt[t][b] end
    losses[b] = math.log(z) - seq_score(c, xt, b, gold)
  end
  local l = T.array(losses, cost.dtype)
  if reduce == 'no' then return l end
  return T.mean(l)
end

function_spec.describe('F.crf1d', {
  fn = function(cost, x0, x1, x2, y0, y1, y2, o) return F.crf1d(cost, { x0, x1, x2 }, { y0, y1, y2 }, o) end,
  inputs = function(dtype)
    return { T.random.uniform(-1, 1, { K, K }, dtype), T.random.uniform(-1, 1, { 3, K }, dtype),
      T.random.uniform(-1, 1, { 2, K }, dtype), T.random.uniform(-1, 1, { 1, K }, dtype),
      T.array({ 0, 2, 1 }, 'int32'), T.array({ 1, 1 }, 'int32'), T.array({ 2 }, 'int32') }
  end,
  reference = function(cost, x0, x1, x2, y0, y1, y2, o) return reference(cost, { x0, x1, x2 }, { y0, y1, y2 }, o.reduce) end,
  cases = { { name = 'mean', opts = {} }, { name = 'no', opts = { reduce = 'no' } } },
})

describe('F.argmax_crf1d', function()
  it('finds the best path and its score (brute force), score is differentiable', function()
    T.random.seed(11)
    local cost = chainer.Variable(T.random.uniform(-1, 1, { K, K }, 'float64'))
    local xs = { T.random.uniform(-1, 1, { 3, K }, 'float64'), T.random.uniform(-1, 1, { 3, K }, 'float64'),
      T.random.uniform(-1, 1, { 1, K }, 'float64') }
    local score, path = F.argmax_crf1d(cost, xs)
    assert.are.equal(3, #path)
    assert.are.same({ 3 }, path[1].shape)
    assert.are.same({ 1 }, path[3].shape)
    assert.are.equal('int32', path[1].dtype)
    local c = cost.array:totable()
    local xt = {}
    for t = 1, 3 do xt[t] = xs[t]:totable() end
    local len = lengths(xt)
    local s = score.array:totable()
    for b = 1, 3 do
      local best, arg = -math.huge, nil
      enumerate(len[b], function(lab)
        local v = seq_score(c, xt, b, lab)
        if v > best then best, arg = v, { unpack(lab) } end
      end)
      assert.is_true(math.abs(s[b] - best) < 1e-12)
      for t = 1, len[b] do assert.are.equal(arg[t], path[t]:totable()[b]) end
    end
    F.sum(score):backward()
    assert.is_not_nil(cost.grad)
  end)
end)

describe('F.crf1d errors', function()
  local cost = T.zeros({ 3, 3 }, 'float32')
  local function err(pat, ...)
    local ok, e = pcall(F.crf1d, ...)
    assert.is_false(ok)
    assert.is_truthy(tostring(e):find(pat, 1, true), tostring(e))
  end
  it('rejects bad labels and shapes', function()
    local xs = { T.zeros({ 2, 3 }, 'float32'), T.zeros({ 2, 3 }, 'float32') }
    err('label ys[1][0] = 3 is out of range', cost, xs, { T.array({ 0, 1 }, 'int32'), T.array({ 3, 1 }, 'int32') })
    err('ys[0] must be an integer tensor', cost, xs, { T.array({ 0, 1 }, 'float32'), T.array({ 0, 1 }, 'int32') })
    err('ys[0] must have shape (2,)', cost, xs, { T.array({ 0 }, 'int32'), T.array({ 0, 1 }, 'int32') })
    err('must not grow', cost, { T.zeros({ 1, 3 }, 'float32'), T.zeros({ 2, 3 }, 'float32') },
      { T.array({ 0 }, 'int32'), T.array({ 0, 1 }, 'int32') })
    err('xs[0] must have shape (B, 3)', cost, { T.zeros({ 2, 4 }, 'float32') }, { T.array({ 0, 1 }, 'int32') })
    err('cost must be a square', T.zeros({ 3, 2 }, 'float32'), xs, { T.array({ 0, 1 }, 'int32'), T.array({ 0, 1 }, 'int32') })
    err('ys must be a Lua array of 2', cost, xs, { T.array({ 0, 1 }, 'int32') })
  end)
end)

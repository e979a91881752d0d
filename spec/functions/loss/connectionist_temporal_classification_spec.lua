-- CTC against brute force: the probability of a label sequence is the sum
-- over every length-T path that collapses to it (merge repeats, drop blanks).
local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'

local function collapse(path, blank)
  local out, prev = {}, nil
  for _, s in ipairs(path) do
    if s ~= prev and s ~= blank then out[#out + 1] = s end
    prev = s
  end
  return out
end

local function brute_nll(probs, label, tlen, blank)
  -- probs[t][k] softmax probabilities for one sequence
  local v = #probs[1]
  local total = 0
  local path = {}
  local function rec(t, p)
    if t > tlen then
      local c = collapse(path, blank)
      if #c == #label then
        for i = 1, #c do if c[i] ~= label[i] then return end end
        total = total + p
      end
      return
    end
    for k = 0, v - 1 do
      path[t] = k
      rec(t + 1, p * probs[t][k + 1])
    end
    path[t] = nil
  end
  rec(1, 1)
  return -math.log(total)
end

local function reference(xs, t, o)
  o = o or {}
  local tl = t:totable()
  local b = #tl
  local losses = {}
  for i = 1, b do
    local probs = {}
    local tlen = o.input_length and o.input_length[i] or #xs
    for s = 1, tlen do
      local x = xs[s]
      local p = T.exp(x - T.logsumexp(x, { axis = 1, keepdims = true })):totable()[i]
      probs[s] = p
    end
    local lab = {}
    local llen = o.label_length and o.label_length[i] or #tl[i]
    for j = 1, llen do lab[j] = tl[i][j] end
    losses[i] = brute_nll(probs, lab, tlen, o.blank or 0)
  end
  local l = T.array(losses, xs[1].dtype)
  if o.reduce == 'no' then return l end
  return T.mean(l)
end

function_spec.describe('F.connectionist_temporal_classification', {
  fn = function(x0, x1, x2, x3, t, o)
    return F.connectionist_temporal_classification({ x0, x1, x2, x3 }, t, o.blank or 0, o.il, o.ll, o.reduce)
  end,
  inputs = function(dtype)
    local xs = {}
    for i = 1, 4 do xs[i] = T.random.uniform(-1, 1, { 2, 3 }, dtype) end
    xs[5] = T.array({ { 1, 2 }, { 2, 2 } }, 'int32')
    return xs
  end,
  reference = function(x0, x1, x2, x3, t, o)
    return reference({ x0, x1, x2, x3 }, t, { blank = o.blank, reduce = o.reduce, input_length = o.il and o.il:totable(),
      label_length = o.ll and o.ll:totable() })
  end,
  cases = {
    { name = 'mean', opts = {} },
    { name = 'no, blank 2', opts = { blank = 0, reduce = 'no' } },
    { name = 'variable lengths', opts = { il = T.array({ 3, 4 }, 'int32'), ll = T.array({ 1, 2 }, 'int32'), reduce = 'no' } },
  },
})

describe('F.connectionist_temporal_classification', function()
  it('blank symbol other than 0, options table form', function()
    T.random.seed(7)
    local xs = {}
    for i = 1, 3 do xs[i] = T.random.uniform(-1, 1, { 1, 3 }, 'float64') end
    local t = T.array({ { 0, 1 } }, 'int32')
    local y = F.connectionist_temporal_classification(xs, t, { blank_symbol = 2, reduce = 'no' })
    testing.assert_allclose(y.array, reference(xs, t, { blank = 2, reduce = 'no' }), { atol = 1e-12 })
  end)
  it('an impossible alignment gives an infinite loss', function()
    local xs = { T.zeros({ 1, 3 }, 'float64') }
    local y = F.connectionist_temporal_classification(xs, T.array({ { 1, 1 } }, 'int32'), 0)
    assert.are.equal(math.huge, y.array:item())
  end)
  it('rejects bad labels and arguments', function()
    local xs = { T.zeros({ 2, 3 }, 'float32'), T.zeros({ 2, 3 }, 'float32') }
    local function err(pat, ...)
      local ok, e = pcall(F.connectionist_temporal_classification, ...)
      assert.is_false(ok)
      assert.is_truthy(tostring(e):find(pat, 1, true), tostring(e))
    end
    err('label t[1, 0] = 3 is out of range', xs, T.array({ { 1 }, { 3 } }, 'int32'), 0)
    err('t must be an integer tensor', xs, T.array({ { 1 }, { 2 } }, 'float32'), 0)
    err('labels t must have shape (2, L)', xs, T.array({ 1, 2 }, 'int32'), 0)
    err('blank_symbol 5 is out of range', xs, T.array({ { 1 }, { 2 } }, 'int32'), 5)
    err('input_length[0] = 3 is out of range', xs, T.array({ { 1 }, { 2 } }, 'int32'), 0, T.array({ 3, 1 }, 'int32'))
    err('x must be a non-empty Lua array', T.zeros({ 2, 3 }, 'float32'), T.array({ { 1 }, { 2 } }, 'int32'), 0)
    err('blank_symbol must be an integer', xs, T.array({ { 1 }, { 2 } }, 'int32'))
  end)
end)

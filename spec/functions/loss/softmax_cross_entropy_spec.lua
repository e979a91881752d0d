-- F.softmax_cross_entropy: fused kernel vs a log-softmax reference, every
-- option, double backprop (enable_double_backprop), and bad labels.
local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'

-- reference from tensor ops: -w[t] * log_softmax(x)[t], reduced
local function reference(x, t, opts)
  opts = opts or {}
  local ignore = opts.ignore_label or -1
  local c = x.shape[2]
  local log_y = x - T.logsumexp(x, { axis = 1, keepdims = true })
  local ts = x.shape
  ts[2] = 1
  local tt = t:astype('int64')
  local valid = T.ne(tt, ignore)
  local safe = T.where(valid, tt, 0):astype('int64')
  local picked = T.take_along_axis(log_y, safe:reshape(ts), 1):reshape(t.shape)
  local w = T.ones(t.shape, x.dtype)
  if opts.class_weight then
    local cw = T.is_tensor(opts.class_weight) and opts.class_weight or T.array(opts.class_weight, x.dtype)
    w = T.take(cw:astype(x.dtype), safe)
  end
  local loss = -(picked * w) * valid:astype(x.dtype)
  if opts.reduce == 'no' then return loss end
  local n = opts.normalize == false and x.shape[1] or math.max(1, tonumber(T.sum(valid:astype('int64')):item()))
  return T.sum(loss) / n
end

local function labels(n, c, shape, with_ignore)
  local t = T.random.randint(0, c, shape, 'int32')
  if with_ignore then t:reshape(-1):slice({ 0, 1 }):fill_(-1) end
  return t
end

local function inputs(dtype, opts)
  local shape = opts.spatial and { 2, 3, 2, 2 } or { 4, 5 }
  local ts = opts.spatial and { 2, 2, 2 } or { 4 }
  return { T.random.uniform(-2, 2, shape, dtype), labels(shape[1], shape[2], ts, opts.ignore) }
end

-- A case's own keys (ignore, spatial) shape its inputs; the rest are F's options.
local function f_opts(opts)
  local o = {}
  for k, v in pairs(opts) do if k ~= 'ignore' and k ~= 'spatial' then o[k] = v end end
  return o
end

-- the fused kernel: differentiable once, as Chainer's default
function_spec.describe('F.softmax_cross_entropy', {
  fn = function(x, t, opts) return F.softmax_cross_entropy(x, t, f_opts(opts)) end,
  inputs = inputs,
  reference = function(x, t, opts) return reference(x, t, opts) end,
  cases = {
    { name = 'mean', opts = {} },
    { name = 'reduce no', opts = { reduce = 'no' } },
    { name = 'ignore', opts = { ignore = true } },
    { name = 'ignore normalize=false', opts = { ignore = true, normalize = false } },
    { name = 'class_weight', opts = { class_weight = { 0.5, 1, 2, 0.1, 3 } } },
    { name = 'spatial', opts = { spatial = true } },
    { name = 'spatial no', opts = { spatial = true, reduce = 'no', ignore = true } },
  },
})

-- the composed path: every order of differentiation
function_spec.describe('F.softmax_cross_entropy enable_double_backprop', {
  fn = function(x, t, opts) return F.softmax_cross_entropy(x, t, f_opts(opts)) end,
  inputs = inputs,
  reference = function(x, t, opts) return reference(x, t, opts) end,
  double_backward = true,
  cases = {
    { name = 'mean', opts = { enable_double_backprop = true } },
    { name = 'weights ignore', opts = { enable_double_backprop = true, class_weight = { 0.5, 1, 2, 0.1, 3 }, ignore = true } },
    { name = 'spatial no', opts = { enable_double_backprop = true, reduce = 'no', spatial = true } },
    { name = 'normalize=false', opts = { enable_double_backprop = true, normalize = false, ignore = true } },
  },
})

describe('F.softmax_cross_entropy values', function()
  it('matches hand-computed numbers', function()
    local x = T.array({ { 1, 2, 3 }, { 0, 0, 0 } }, 'float64')
    local t = T.array({ 2, 0 }, 'int32')
    local l1 = -(3 - math.log(math.exp(1) + math.exp(2) + math.exp(3)))
    local l2 = math.log(3)
    local y = F.softmax_cross_entropy(x, t)
    assert.is_true(math.abs(y.array:item() - (l1 + l2) / 2) < 1e-12)
    assert.are.same({}, y.shape)
    local yn = F.softmax_cross_entropy(x, t, { reduce = 'no' })
    testing.assert_allclose(yn.array, T.array({ l1, l2 }, 'float64'), { atol = 1e-12 })
  end)

  it('gradient is (softmax - onehot) / N and the fused and composed paths agree', function()
    T.random.seed(3)
    local xd = T.random.uniform(-1, 1, { 3, 4 }, 'float64')
    local t = T.array({ 3, -1, 1 }, 'int32')
    local x1, x2 = chainer.Variable(xd:copy()), chainer.Variable(xd:copy())
    F.softmax_cross_entropy(x1, t, { class_weight = T.array({ 1, 2, 3, 4 }, 'float64') }):backward()
    F.softmax_cross_entropy(x2, t, { class_weight = { 1, 2, 3, 4 }, enable_double_backprop = true }):backward()
    testing.assert_allclose(x1.grad, x2.grad, { atol = 1e-12 })
    local x3 = chainer.Variable(xd:copy())
    F.softmax_cross_entropy(x3, t):backward()
    local p = T.exp(xd - T.logsumexp(xd, { axis = 1, keepdims = true }))
    local want = p:totable()
    want[1][4] = want[1][4] - 1
    want[2] = { 0, 0, 0, 0 }
    want[3][2] = want[3][2] - 1
    testing.assert_allclose(x3.grad, T.array(want, 'float64') / 2, { atol = 1e-12 })
  end)

  it('all labels ignored gives 0 loss and 0 gradient', function()
    local x = chainer.Variable(T.ones({ 2, 3 }, 'float32'))
    local y = F.softmax_cross_entropy(x, T.array({ -1, -1 }, 'int32'))
    assert.are.equal(0, y.array:item())
    y:backward()
    testing.assert_allclose(x.grad, T.zeros({ 2, 3 }, 'float32'))
  end)

  it('a custom ignore_label and int64 labels', function()
    local x = T.array({ { 1, 2 }, { 3, 1 } }, 'float64')
    local y = F.softmax_cross_entropy(x, T.array({ 5, 0 }, 'int64'), { ignore_label = 5 })
    assert.is_true(math.abs(y.array:item() - math.log(1 + math.exp(-2))) < 1e-12)
  end)

  it('handles non-contiguous logits and an empty batch', function()
    T.random.seed(4)
    local base = T.random.uniform(-1, 1, { 5, 3 }, 'float32')
    local xt = base:transpose()          -- (3, 5), not contiguous
    local t = T.array({ 0, 4, 2 }, 'int32')
    testing.assert_allclose(F.softmax_cross_entropy(xt, t).array, reference(xt:copy(), t), { atol = 1e-6 })
    local e = F.softmax_cross_entropy(T.zeros({ 0, 3 }, 'float32'), T.zeros({ 0 }, 'int32'))
    assert.are.equal(0, e.array:item())
  end)

  it('large logits stay finite', function()
    local x = T.array({ { 1000, -1000, 0 } }, 'float32')
    local y = F.softmax_cross_entropy(x, T.array({ 0 }, 'int32'))
    assert.is_true(math.abs(y.array:item()) < 1e-6)
    local y2 = F.softmax_cross_entropy(x, T.array({ 1 }, 'int32'))
    assert.is_true(math.abs(y2.array:item() - 2000) < 1e-2)
  end)

  it('the fused gradient is differentiable in the upstream gradient', function()
    local x = chainer.Variable(T.array({ { 0.1, 0.2, 0.3 } }, 'float64'))
    local y = F.softmax_cross_entropy(x, T.array({ 1 }, 'int32'), { reduce = 'no' })
    local gy = chainer.Variable(T.array({ 2 }, 'float64'))
    local gx = chainer.grad({ y }, { x }, { grad_outputs = { gy }, enable_double_backprop = true })[1]
    local ggy = chainer.grad({ gx }, { gy }, { grad_outputs = { chainer.Variable(T.ones({ 1, 3 }, 'float64')) } })[1]
    -- d/dgy sum(gy * (p - onehot)) = sum(p) - 1 = 0
    assert.is_true(math.abs(ggy.array:totable()[1]) < 1e-12)
  end)
end)

describe('F.softmax_cross_entropy errors', function()
  local x = T.zeros({ 3, 4 }, 'float32')
  local function err(f, pat)
    local ok, e = pcall(f)
    assert.is_false(ok)
    assert.is_truthy(tostring(e):find(pat, 1, true), tostring(e))
  end
  it('rejects out-of-range labels', function()
    err(function() F.softmax_cross_entropy(x, T.array({ 0, 4, 1 }, 'int32')) end, 'softmax_cross_entropy: label t[1]')
    err(function() F.softmax_cross_entropy(x, T.array({ 0, -2, 1 }, 'int32')) end, 'out of range for 4 classes')
    err(function() F.softmax_cross_entropy(x, T.array({ 0, 7, 1 }, 'int32'), { enable_double_backprop = true }) end,
      'softmax_cross_entropy: label t[1]')
  end)
  it('rejects float labels and wrong shapes', function()
    err(function() F.softmax_cross_entropy(x, T.array({ 0, 1, 1 }, 'float32')) end,
      'softmax_cross_entropy: labels t must be an integer tensor')
    err(function() F.softmax_cross_entropy(x, T.array({ 0, 1 }, 'int32')) end, 'do not fit x of shape (3, 4)')
    err(function() F.softmax_cross_entropy(T.zeros({ 4 }, 'float32'), T.array({ 0 }, 'int32')) end,
      'at least 2 dimensions')
    err(function() F.softmax_cross_entropy(T.zeros({ 3, 4 }, 'int32'), T.array({ 0, 1, 1 }, 'int32')) end,
      'x must be a float tensor')
  end)
  it('rejects bad options', function()
    local t = T.array({ 0, 1, 1 }, 'int32')
    err(function() F.softmax_cross_entropy(x, t, { reduce = 'sum' }) end, "reduce must be 'mean' or 'no'")
    err(function() F.softmax_cross_entropy(x, t, { class_weight = { 1, 2 } }) end, 'class_weight must have 4 entries')
    err(function() F.softmax_cross_entropy(x, t, { class_weight = T.ones({ 3 }, 'float32') }) end,
      'class_weight must have shape (4,)')
  end)
end)

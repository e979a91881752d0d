-- chainer.graph_optimizations.static_graph and chainer.static_code: the
-- replayed forward and backward give what define-by-run gives, one schedule
-- per input signature, and each restriction its error or fallback.
local chainer = require 'chainer'
local H = require 'helpers'
local T = chainer.tensor
local F = chainer.functions
local L = chainer.links
local static_graph = chainer.graph_optimizations.static_graph
local static_code = chainer.static_code

-- Whether y came from a replay (one StaticSchedule node) rather than from
-- define-by-run.
local function replayed(y)
  local c = y.creator
  return c ~= nil and c:label() == 'StaticSchedule'
end

local MLP = chainer.Chain:extend('MLP')
function MLP:init(dtype)
  local init = { initialW = chainer.initializers.Normal(0.5, dtype), initial_bias = chainer.initializers.Normal(0.1, dtype) }
  self.l1 = L.Linear(6, 8, init)
  self.l2 = L.Linear(8, 8, init)
  self.l3 = L.Linear(8, 3, init)
end
function MLP:forward(x, t)
  local h = F.relu(self.l1(x))
  h = F.relu(self.l2(h)) * 0.5 + h
  return F.softmax_cross_entropy(self.l3(h), t)
end
local StaticMLP = MLP:extend('StaticMLP')
StaticMLP.forward = static_graph(MLP.forward)

local CNN = chainer.Chain:extend('CNN')
function CNN:init(dtype)
  local init = { initialW = chainer.initializers.Normal(0.3, dtype), initial_bias = chainer.initializers.Normal(0.1, dtype) }
  self.c1 = L.Convolution2D(2, 4, 3, init)
  self.c2 = L.Convolution2D(4, 5, 3, { pad = 1, initialW = init.initialW, initial_bias = init.initial_bias })
  self.fc = L.Linear(5 * 3 * 3, 3, init)
end
function CNN:forward(x, t)
  local h = F.max_pooling_2d(F.relu(self.c1(x)), 2)
  h = F.tanh(self.c2(h))
  return F.softmax_cross_entropy(self.fc(h), t)
end
local StaticCNN = CNN:extend('StaticCNN')
StaticCNN.forward = static_graph(CNN.forward)

-- A static MLP and a define-by-run one with the same parameters (float64).
local function twin_mlps()
  local m, ref = StaticMLP('float64'), MLP('float64')
  ref:copyparams(m)
  return m, ref
end

local function max_diff(a, b) return T.max(T.abs(a - b)):item() end

-- Trains a define-by-run and a static copy side by side with MomentumSGD;
-- returns the largest differences of losses and of parameters.
local function train_both(Dyn, Static, dtype, x, t, steps)
  local m1 = Dyn(dtype)
  local m2 = Static(dtype)
  m2:copyparams(m1)
  local o1, o2 = chainer.optimizers.MomentumSGD(0.05), chainer.optimizers.MomentumSGD(0.05)
  o1:setup(m1)
  o2:setup(m2)
  local dloss, dparam, nreplayed = 0, 0, 0
  for _ = 1, steps do
    m1:cleargrads()
    m2:cleargrads()
    local l1, l2 = m1(x, t), m2(x, t)
    if replayed(l2) then nreplayed = nreplayed + 1 end
    l1:backward()
    l2:backward()
    o1:update()
    o2:update()
    dloss = math.max(dloss, math.abs(l1.array:item() - l2.array:item()))
  end
  local p2 = {}
  for path, p in m2:namedparams() do p2[path] = p end
  for path, p in m1:namedparams() do dparam = math.max(dparam, max_diff(p.array, p2[path].array)) end
  return dloss, dparam, nreplayed
end

local function labels(n) local t = {} for i = 1, n do t[i] = (i * 7) % 3 end return T.array(t, 'int32') end

describe('static_graph', function()
  before_each(function() T.random.seed(7) end)

  for _, c in ipairs({ { 'float64', 1e-12 }, { 'float32', 1e-6 } }) do
    local dtype, tol = c[1], c[2]
    it('trains an MLP as define-by-run does (' .. dtype .. ')', function()
      local x = T.random.randn({ 5, 6 }, dtype)
      local dloss, dparam, n = train_both(MLP, StaticMLP, dtype, x, labels(5), 6)
      assert.equal(4, n)   -- recorded, verified, then replayed
      assert.is_true(dloss <= tol, 'loss differs by ' .. dloss)
      assert.is_true(dparam <= tol, 'parameters differ by ' .. dparam)
    end)

    it('trains a small CNN as define-by-run does (' .. dtype .. ')', function()
      local x = T.random.randn({ 3, 2, 8, 8 }, dtype)
      local dloss, dparam, n = train_both(CNN, StaticCNN, dtype, x, labels(3), 5)
      assert.equal(3, n)
      assert.is_true(dloss <= tol, 'loss differs by ' .. dloss)
      assert.is_true(dparam <= tol, 'parameters differ by ' .. dparam)
    end)
  end

  -- bitwise: a replay runs the same kernels in the same order as
  -- define-by-run, so not a single bit may differ
  local function same_bits(a, b, what)
    assert.same(a.shape, b.shape, what)
    assert.is_true(T.all(T.eq(a, b)):item(), what .. ' differs (not bitwise identical)')
  end

  for _, dtype in ipairs({ 'float64', 'float32' }) do
    it('replays the MLP bitwise identically to define-by-run, step after step (' .. dtype .. ')', function()
      local x = T.random.randn({ 5, 6 }, dtype)
      local m1, m2 = MLP(dtype), StaticMLP(dtype)
      m2:copyparams(m1)
      local o1, o2 = chainer.optimizers.MomentumSGD(0.05):setup(m1), chainer.optimizers.MomentumSGD(0.05):setup(m2)
      local p2 = {}
      for path, p in m2:namedparams() do p2[path] = p end
      for step = 1, 5 do
        m1:cleargrads()
        m2:cleargrads()
        local l1, l2 = m1(x, labels(5)), m2(x, labels(5))
        assert.equal(step >= 3, replayed(l2))
        same_bits(l1.array, l2.array, 'loss at step ' .. step)
        l1:backward()
        l2:backward()
        for path, p in m1:namedparams() do same_bits(p.grad, p2[path].grad, path .. '.grad at step ' .. step) end
        o1:update()
        o2:update()
      end
    end)

    it('replays the per-node loop bitwise identically, gradients included (' .. dtype .. ')', function()
      local a = chainer.Variable(T.full({ 10 }, 1.001, dtype))
      local b = chainer.Variable(T.full({ 10 }, 0.001, dtype))
      local function body(x)
        local h = x
        for _ = 1, 50 do h = h * a + b end
        return F.sum(h)
      end
      local sbody = static_graph(body)
      local x = chainer.Variable(T.random.randn({ 10 }, dtype))
      for it = 1, 4 do
        a:cleargrad() b:cleargrad() x:cleargrad()
        local y1 = body(x)
        y1:backward()
        local ga, gb, gx = a.grad:copy(), b.grad:copy(), x.grad:copy()
        a:cleargrad() b:cleargrad() x:cleargrad()
        local y2 = sbody(x)
        assert.equal(it >= 3, replayed(y2))
        same_bits(y1.array, y2.array, 'result')
        y2:backward()
        same_bits(a.grad, ga, 'a.grad')
        same_bits(b.grad, gb, 'b.grad')
        same_bits(x.grad, gx, 'x.grad')
      end
    end)
  end

  -- What a replay hands out (its results, what a later call's graph
  -- retains) is never written by the next replay (docs/static_graph.md,
  -- "Buffers"): results kept from call k are unchanged after call k + 1,
  -- and several calls before one backward each get their own gradients.
  it('never overwrites a result of an earlier call, and takes several calls before one backward', function()
    local m, ref = twin_mlps()
    local x1, x2 = T.random.randn({ 4, 6 }, 'float64'), T.random.randn({ 4, 6 }, 'float64')
    for _ = 1, 2 do m(x1, labels(4)) end   -- recorded and verified
    local y1 = m(x1, labels(4))
    assert.is_true(replayed(y1))
    local kept = y1.array:copy()
    local y2 = m(x2, labels(4))
    assert.is_true(replayed(y2))
    same_bits(y1.array, kept, 'the result of the earlier call')
    -- one backward through both calls: the sum of both gradients
    m:cleargrads()
    ref:cleargrads()
    local r1, r2 = ref(x1, labels(4)), ref(x2, labels(4))
    same_bits(y1.array, r1.array, 'call 1')
    same_bits(y2.array, r2.array, 'call 2')
    ;(y1 + y2):backward()
    ;(r1 + r2):backward()
    local pr = {}
    for path, p in ref:namedparams() do pr[path] = p end
    for path, p in m:namedparams() do same_bits(p.grad, pr[path].grad, path .. '.grad') end
    -- a replay whose graph is still held keeps its retained tensors: its
    -- backward after later calls gives what it gave before
    m:cleargrads()
    local y3 = m(x1, labels(4))
    for _ = 1, 3 do m(x2, labels(4)) end
    y3:backward()
    ref:cleargrads()
    ref(x1, labels(4)):backward()
    for path, p in m:namedparams() do same_bits(p.grad, pr[path].grad, path .. '.grad after later calls') end
  end)

  it('gives a changed batch size its own schedule', function()
    local m, ref = twin_mlps()
    local x6, x4 = T.random.randn({ 6, 6 }, 'float64'), T.random.randn({ 4, 6 }, 'float64')
    local seen = {}
    for _, x in ipairs({ x6, x6, x6, x4, x4, x4, x6 }) do
      local y = m(x, labels(x.shape[1]))
      seen[#seen + 1] = replayed(y)
      H.close(y, ref(x, labels(x.shape[1])), 1e-12)
    end
    assert.same({ false, false, true, false, false, true, true }, seen)
  end)

  it('keeps one schedule with minimize_cache_size', function()
    local f = static_graph(function(x) return F.sum(F.tanh(x)) end, { minimize_cache_size = true })
    local x3, x4 = chainer.Variable(T.ones({ 3 })), chainer.Variable(T.ones({ 4 }))
    local seen = {}
    for _, x in ipairs({ x3, x3, x3, x4, x4, x3 }) do seen[#seen + 1] = replayed(f(x)) end
    assert.same({ false, false, true, false, false, false }, seen)
  end)

  it('replays without backprop (inference) and in test mode, each its own schedule', function()
    local m, ref = twin_mlps()
    local x = T.random.randn({ 2, 6 }, 'float64')
    for _ = 1, 3 do
      chainer.no_backprop_mode(function() H.close(m(x, labels(2)), ref(x, labels(2)), 1e-12) end)
      chainer.using_config('train', false, function() H.close(m(x, labels(2)), ref(x, labels(2)), 1e-12) end)
    end
  end)

  it('gives gradients with respect to the inputs, and honours retain_grad', function()
    local m, ref = twin_mlps()
    local xd = T.random.randn({ 3, 6 }, 'float64')
    for it = 1, 3 do
      local x1, x2 = chainer.Variable(xd:copy()), chainer.Variable(xd:copy())
      local y1, y2 = ref(x1, labels(3)), m(x2, labels(3))
      assert.equal(it == 3, replayed(y2))
      y1:backward()
      y2:backward({ retain_grad = true })
      H.close(x1.grad, x2.grad, 1e-12)
      assert.is_not_nil(y2.grad)
    end
  end)

  it('takes a plain function and Variables from outside (the per-node loop)', function()
    local a = chainer.Variable(T.full({ 10 }, 1.001, 'float64'))
    local b = chainer.Variable(T.full({ 10 }, 0.001, 'float64'))
    local function body(x)
      local h = x
      for _ = 1, 10 do h = h * a + b end
      return F.sum(h)
    end
    local sbody = static_graph(body)
    local x = chainer.Variable(T.full({ 10 }, 0.5, 'float64'))
    for it = 1, 4 do
      a:cleargrad() b:cleargrad() x:cleargrad()
      body(x):backward()
      local ga, gb, gx = a.grad:copy(), b.grad:copy(), x.grad:copy()
      a:cleargrad() b:cleargrad() x:cleargrad()
      local y = sbody(x)
      assert.equal(it >= 3, replayed(y))
      y:backward()
      H.close(a.grad, ga, 1e-12)
      H.close(b.grad, gb, 1e-12)
      H.close(x.grad, gx, 1e-12)
    end
  end)

  it('runs static_code on every call, replays included', function()
    local calls = 0
    local offset = static_code(function(shape)
      calls = calls + 1
      return T.full(shape, calls, 'float64')
    end)
    local f = static_graph(function(x) return F.sum(x * offset(x.shape)) end)
    local x = chainer.Variable(T.ones({ 3 }, 'float64'))
    local got = {}
    for it = 1, 4 do got[it] = f(x).array:item() end
    assert.same({ 3, 6, 9, 12 }, got)
    assert.equal(4, calls)
  end)

  it('draws a fresh dropout mask on each replay, as define-by-run does', function()
    local Drop = chainer.Chain:extend('Drop')
    function Drop:init() self.l = L.Linear(5, 20) end
    function Drop:forward(x) return F.dropout(self.l(x), 0.5) end
    local SDrop = Drop:extend('SDrop')
    SDrop.forward = static_graph(Drop.forward)
    local m1 = Drop()
    local m2 = SDrop()
    m2:copyparams(m1)
    local x = T.random.randn({ 2, 5 })
    local function run(m)
      T.random.seed(3)
      local outs = {}
      for it = 1, 5 do
        local y = m(x)
        F.sum(y):backward()
        outs[it] = y
      end
      return outs
    end
    local d, s = run(m1), run(m2)
    for it = 1, 5 do H.close(d[it], s[it], 0) end
    assert.is_true(replayed(s[4]) and replayed(s[5]))
    assert.is_true(max_diff(s[4].array, s[5].array) > 0, 'two replays gave the same mask')
    H.close(m1.l.W.grad, m2.l.W.grad, 1e-6)
  end)

  describe('restrictions', function()
    it('a forward whose graph changes between calls is an error', function()
      local calls = 0
      local f = static_graph(function(x)
        calls = calls + 1
        if calls == 2 then return F.sum(F.exp(x)) end
        return F.sum(F.tanh(x))
      end)
      local x = chainer.Variable(T.ones({ 3 }))
      f(x)
      H.errors_with(function() f(x) end, 'static_graph', 'another graph', 'Tanh', 'Exp')
    end)

    it('a tensor computed outside chainer functions that changes is an error', function()
      local f = static_graph(function(x) return F.sum(x * T.random.rand({ 3 })) end)
      local x = chainer.Variable(T.ones({ 3 }))
      f(x)
      H.errors_with(function() f(x) end, 'static_graph', 'changed between the calls', 'static_code')
    end)

    it('a state carried between calls is an error', function()
      local state = chainer.Variable(T.zeros({ 3 }))
      local f = static_graph(function(x)
        state = state + x
        return F.sum(state)
      end)
      local x = chainer.Variable(T.ones({ 3 }))
      f(x)
      H.errors_with(function() f(x) end, 'static_graph', 'another one on the second call')
    end)

    it('function hooks and debug mode run define-by-run', function()
      local m = StaticMLP('float64')
      local x = T.random.randn({ 2, 6 }, 'float64')
      for _ = 1, 3 do m(x, labels(2)) end
      assert.is_true(replayed(m(x, labels(2))))
      local Count = chainer.FunctionHook:extend('Count')
      function Count:init() self.n = 0 end
      function Count:forward_postprocess() self.n = self.n + 1 end
      local hook, ref_hook = Count(), Count()
      hook:scope(function()
        local y = m(x, labels(2))
        assert.is_false(replayed(y))
        y:backward()
      end)
      local ref = MLP('float64')
      ref_hook:scope(function() ref(x, labels(2)):backward() end)
      assert.equal(ref_hook.n, hook.n)   -- the hook saw every node
      chainer.using_config('debug', true, function() assert.is_false(replayed(m(x, labels(2)))) end)
    end)

    it('a node class with its own backward_accumulate runs define-by-run, with its gradients', function()
      -- Twice: y = 2x, whose class defines only backward_accumulate (a
      -- replay would call backward, which it lacks: no gradient at all)
      local Twice = chainer.FunctionNode:extend('TwiceAccumulating')
      function Twice:forward(inputs) return { inputs[1] * 2 } end
      function Twice:backward_accumulate(_, gys, gins)
        local gx = gys[1] * 2
        if gins[1] ~= nil then gx = gx + gins[1] end
        return { gx }
      end
      local f = static_graph(function(x) return F.sum(Twice():apply({ x })[1]) end)
      local x = chainer.Variable(T.array({ 1, 2, 3 }, 'float64'))
      local old = io.stderr
      io.stderr = { write = function() end }   -- (the fallback's warning)
      local ok, err = pcall(function()
        for _ = 1, 4 do
          x:cleargrad()
          local y = f(x)
          assert.is_false(replayed(y))
          y:backward()
          assert.are.same({ 2, 2, 2 }, x.grad:totable())
        end
      end)
      io.stderr = old
      assert(ok, err)
    end)

    it('double backprop and hooks or debug mode during the backward of a replay are errors', function()
      local m = StaticMLP('float64')
      local x = T.random.randn({ 2, 6 }, 'float64')
      for _ = 1, 2 do m(x, labels(2)) end
      H.errors_with(function() m(x, labels(2)):backward({ enable_double_backprop = true }) end,
        'static_graph', 'double backprop')
      local y = m(x, labels(2))
      H.errors_with(function()
        chainer.using_config('debug', true, function() y:backward() end)
      end, 'static_graph', 'debug mode')
    end)

    it('batch normalization with running statistics runs define-by-run, with a warning', function()
      local BN = chainer.Chain:extend('BNNet')
      function BN:init() self.bn = L.BatchNormalization(4) end
      BN.forward = static_graph(function(self, x) return self.bn(x) end)
      local m = BN()
      local x = T.random.randn({ 5, 4 })
      for _ = 1, 4 do assert.is_false(replayed(m(x))) end
      -- the running mean moved on every call
      local expected = T.mean(x, 0) * (1 - 0.9 ^ 4)
      H.close(m.bn.avg_mean, expected, 1e-5)
    end)

    it('re-records when a parameter stops requiring a gradient', function()
      local m = StaticMLP('float64')
      local x = T.random.randn({ 2, 6 }, 'float64')
      for _ = 1, 3 do m(x, labels(2)) end
      m.l1.W.requires_grad = false
      local y = m(x, labels(2))
      assert.is_false(replayed(y))
      y:backward()
      assert.is_nil(m.l1.W.grad)
    end)

    it('rejects bad options and arguments', function()
      H.errors_with(function() static_graph(MLP.forward, { verbose = 1 }) end, 'static_graph', 'verbose')
      H.errors_with(function() static_graph(MLP.forward, { enable_double_backprop = true }) end,
        'static_graph', 'enable_double_backprop')
      H.errors_with(function() static_graph(42) end, 'static_graph', 'function')
      H.errors_with(function() static_code('x') end, 'static_code', 'function')
      local f = static_graph(function(x) return x end)
      H.errors_with(function() f({ 1, 2 }) end, 'static_graph', 'argument 1 is a table')
    end)
  end)
end)

-- ParallelUpdater on the CPU (devices that repeat), and the multi-GPU
-- exchange (training/updaters/_device_exchange.lua) run on the host with a
-- stand-in for NCCL's communicators.  spec/cuda/multi_gpu_spec.lua runs the
-- same on two GPUs.
local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local L = chainer.links
local updaters = chainer.training.updaters
local exchange = require 'chainer.training.updaters._device_exchange'

-- A classifier with dropout (so the order of the random draws shows) and a
-- batch normalization (persistent values the copies take).
local function model(seed)
  T.random.seed(seed)
  local Net = chainer.Chain:extend('ParallelSpecNet')
  function Net:init()
    self.l1 = L.Linear(4, 8)
    self.bn = L.BatchNormalization(8)
    self.l2 = L.Linear(8, 3)
  end
  function Net:forward(x) return self.l2(F.dropout(F.relu(self.bn(self.l1(x))), 0.3)) end
  return L.Classifier(Net())
end

local function dataset(n)
  T.random.seed(5)
  local x = T.random.normal(0, 1, { n, 4 }, 'float32')
  local t = T.random.randint(0, 3, { n }):astype('int32')
  return chainer.datasets.TupleDataset(x, t)
end

local function same_params(a, b)
  local pa = {}
  for path, p in a:namedparams() do pa[path] = p end
  local n = 0
  for path, p in b:namedparams() do
    n = n + 1
    assert.are.equal(0, (pa[path].array - p.array):abs():max():item(), path)
  end
  return n
end

-- ParallelUpdater's step as it was written before the multi-GPU path (and
-- as Chainer's is): all forwards, then all backwards, then the sum, the
-- update and the copies' refresh.
local function reference_steps(steps)
  local main = model(3)
  local opt = chainer.optimizers.MomentumSGD(0.1):setup(main)
  local second = main:copy()
  local it = chainer.iterators.SerialIterator(dataset(24), 6, { shuffle = false })
  T.random.seed(11)
  for _ = 1, steps do
    local batch = it:next()
    local subs = { {}, {} }
    for j = 1, #batch do table.insert(subs[(j - 1) % 2 + 1], batch[j]) end
    local ins = { chainer.dataset.concat_examples(subs[1], -1), chainer.dataset.concat_examples(subs[2], -1) }
    local models = { main, second }
    for _, m in ipairs(models) do m:cleargrads() end
    local losses = {}
    require('chainer.config').force_backprop_mode(function()
      for i, m in ipairs(models) do losses[i] = m(ins[i][1], ins[i][2]) end
    end)
    for _, m in ipairs(models) do m:cleargrads() end
    for _, l in ipairs(losses) do l:backward() end
    main:addgrads(second)
    opt:update()
    second:copyparams(main)
  end
  return main
end

describe('ParallelUpdater on the CPU', function()
  it('{main = -1, second = -1} gives the bits of the two-copy step, dropout and batch statistics included', function()
    local main = model(3)
    local opt = chainer.optimizers.MomentumSGD(0.1):setup(main)
    local it = chainer.iterators.SerialIterator(dataset(24), 6, { shuffle = false })
    local u = updaters.ParallelUpdater(it, opt, { devices = { main = -1, second = -1 } })
    assert.is_nil(u._gpus)   -- repeated devices: the sequential path
    T.random.seed(11)
    for _ = 1, 4 do u:update() end
    assert.are.equal(6, same_params(reference_steps(4), main))
  end)

  it('takes distinct GPUs as the concurrent path, and anything else as the sequential one', function()
    local names = exchange.rank_order({ 'a', 'main', 'z' })
    assert.are.same({ 'main', 'a', 'z' }, names)
    assert.are.same({ 1, 0, 2 }, exchange.gpu_devices({ main = 1, a = 0, z = 2 }, names))
    assert.are.same({ 0, 1 }, exchange.gpu_devices({ main = 'cuda:0', a = '@cupy:1' }, { 'main', 'a' }))
    assert.is_nil(exchange.gpu_devices({ main = 0, a = 0 }, { 'main', 'a' }))     -- repeated
    assert.is_nil(exchange.gpu_devices({ main = -1, a = 0 }, { 'main', 'a' }))    -- a CPU
    assert.is_nil(exchange.gpu_devices({ main = 0 }, { 'main', 'a' }))            -- unknown
    assert.is_nil(exchange.gpu_devices({ main = 0 }, { 'main' }))                 -- one model
  end)
end)

-- A stand-in for NCCL's communicators, one per rank, on the host: the calls
-- of one group are matched by position across the ranks and run at the
-- group's end, as NCCL does.
local function fake_nccl(n)
  local queues, comms, groups = {}, {}, { count = 0 }
  for r = 1, n do
    queues[r] = {}
    comms[r] = {
      reduce = function(_, send, recv, op, root)
        assert.are.equal('sum', op)
        assert.are.equal(0, root)
        assert.is_true(send.is_contiguous)
        table.insert(queues[r], { 'reduce', send, recv })
      end,
      bcast = function(_, send, recv, root)
        assert.are.equal(0, root)
        table.insert(queues[r], { 'bcast', send, recv })
      end,
    }
  end
  local function group(fn)
    groups.count = groups.count + 1
    fn()
    for k = 1, #queues[1] do
      local kind = queues[1][k][1]
      if kind == 'reduce' then
        local sum = queues[1][k][2]
        for r = 2, n do sum = T.add(sum, queues[r][k][2]) end   -- addgrads' order
        queues[1][k][3]:copy_(sum)
      else
        for r = 2, n do queues[r][k][3]:copy_(queues[1][k][2]) end
      end
      for r = 2, n do assert.are.equal(kind, queues[r][k][1]) end
    end
    for r = 1, n do queues[r] = {} end
  end
  return comms, group, groups
end

describe('the multi-GPU exchange, run on the host', function()
  local function three_copies()
    local main = model(3)
    local models = { main = main, b = main:copy('copy'), c = main:copy('copy') }
    local x = dataset(6)
    local ins = chainer.dataset.concat_examples({ x[1], x[2], x[3], x[4], x[5], x[6] }, -1)
    for _, m in pairs(models) do
      m:cleargrads()
      require('chainer.config').force_backprop_mode(function() m(ins[1], ins[2]):backward() end)
    end
    return models
  end

  it('sums the gradients into the main model as addgrads does, in one group', function()
    local models, ref = three_copies(), nil
    ref = models.main:copy('copy')
    for path, p in ref:namedparams() do
      for q_path, q in models.main:namedparams() do if q_path == path then p.grad = q.grad:copy() end end
    end
    ref:addgrads(models.b)
    ref:addgrads(models.c)
    local plan = exchange.plan(models, { 'b', 'c', 'main' })
    assert.are.same({ 'main', 'b', 'c' }, plan.order)
    local comms, group, groups = fake_nccl(3)
    local before = models.main.predictor.l1.W.grad
    exchange.sum_grads(plan, comms, group)
    assert.are.equal(1, groups.count)
    -- a fresh buffer: the old gradient (which may be shared) is untouched
    assert.are_not.equal(before, models.main.predictor.l1.W.grad)
    local n = 0
    for path, p in ref:namedparams() do
      for q_path, q in models.main:namedparams() do
        if q_path == path then
          n = n + 1
          assert.are.equal(0, (p.grad - q.grad):abs():max():item(), path)
        end
      end
    end
    assert.are.equal(6, n)
  end)

  it('counts a missing gradient as zeros, and sends what NCCL cannot take through addgrad', function()
    local models = three_copies()
    local W = function(m) return m.predictor.l1.W end
    local expect = W(models.main).grad + W(models.c).grad
    W(models.b).grad = nil
    local b_bias = models.b.predictor.l2.b
    b_bias.grad = T.ones({ 3, 2 }, 'float32'):as_strided({ 3 }, { 2 }, 0)   -- a strided gradient
    local bias_expect = models.main.predictor.l2.b.grad + 1 + models.c.predictor.l2.b.grad
    local comms, group = fake_nccl(3)
    exchange.sum_grads(exchange.plan(models, { 'main', 'b', 'c' }), comms, group)
    assert.are.equal(0, (W(models.main).grad - expect):abs():max():item())
    assert.are.equal(0, (models.main.predictor.l2.b.grad - bias_expect):abs():max():item())
  end)

  it('without communicators uses addgrad for everything', function()
    local models = three_copies()
    local expect = models.main.predictor.l2.W.grad + models.b.predictor.l2.W.grad + models.c.predictor.l2.W.grad
    exchange.sum_grads(exchange.plan(models, { 'main', 'b', 'c' }), nil, function() error('no group expected') end)
    assert.is_true((models.main.predictor.l2.W.grad - expect):abs():max():item() < 1e-6)
  end)

  it('refreshes the copies: parameters and persistent values, as copyparams', function()
    local models = three_copies()
    for p in models.main:params() do p.array:fill_(0.25) end
    models.main.predictor.bn.avg_mean:fill_(7)
    models.main.predictor.bn.N = 42
    local comms, group, groups = fake_nccl(3)
    exchange.refresh(exchange.plan(models, { 'main', 'b', 'c' }), models, comms, group)
    assert.are.equal(1, groups.count)
    for _, name in ipairs({ 'b', 'c' }) do
      assert.are.equal(6, same_params(models.main, models[name]))
      assert.are.equal(7, models[name].predictor.bn.avg_mean:max():item())
      assert.are.equal(42, models[name].predictor.bn.N)
    end
  end)

  it('names the copy whose parameters differ', function()
    local models = { main = model(3), b = L.Classifier(L.Linear(4, 3)) }
    assert.has_error(function() exchange.plan(models, { 'main', 'b' }) end)
    local ok, err = pcall(exchange.plan, models, { 'main', 'b' })
    assert.is_false(ok)
    assert.matches("ParallelUpdater: the copy 'b' has the parameters {/predictor/W, /predictor/b} but the main " ..
      'model {/predictor/bn/beta', err, 1, true)
  end)

  it('the concurrent step, run with host copies and the stand-in, trains as the sequential one', function()
    local main = model(3)
    local opt = chainer.optimizers.MomentumSGD(0.1):setup(main)
    local it = chainer.iterators.SerialIterator(dataset(24), 6, { shuffle = false })
    local u = updaters.ParallelUpdater(it, opt, { devices = { main = -1, second = -1 } })
    local comms, group, groups = fake_nccl(2)
    -- what two GPUs would set up, on the host
    u._gpus, u._comms = { 0, 1 }, comms
    local nccl = require 'chainer.cuda.nccl'
    local real_group = nccl.group
    nccl.group = group
    finally(function() nccl.group = real_group end)
    T.random.seed(11)
    for _ = 1, 4 do u:update() end
    assert.are.equal(8, groups.count)   -- a sum and a refresh per step
    -- the copies run one after the other here; without dropout in backward
    -- the random draws come in the same order, so the bits are the same
    assert.are.equal(6, same_params(reference_steps(4), main))
  end)
end)

-- MultiprocessParallelUpdater: forked workers, each on its own iterator,
-- gradients summed into the master (Chainer's NCCL_SUM reduce), the
-- master's optimizer updating, the workers taking its parameters.
local chainer = require 'chainer'
local T = chainer.tensor
local L, F, O = chainer.links, chainer.functions, chainer.optimizers
local datasets, iterators = chainer.datasets, chainer.iterators
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'
local libc = require 'chainer._libc'
local H = require 'training.helpers'
local MPU = training.updaters.MultiprocessParallelUpdater

local BATCH = 4

-- n datasets of the same length, different examples (float64).
local function split_data(n, per_process, dtype)
  T.random.seed(3)
  local x = T.random.normal(0, 1, { n * per_process, 4 }, dtype or 'float64')
  local t = (x:sum({ axis = 1 }):gt(0)):astype('int32')
  local whole = datasets.TupleDataset(x, t)
  local parts = {}
  for k = 1, n do parts[k] = datasets.SubDataset(whole, (k - 1) * per_process, k * per_process) end
  return parts
end

local function make_iterators(parts)
  local its = {}
  for k, ds in ipairs(parts) do its[k] = iterators.SerialIterator(ds, BATCH, { shuffle = false }) end
  return its
end

local function float64_model(dtype)
  local MLP = chainer.Chain:extend('MPUSpecMLP')
  function MLP:init() self.l1 = L.Linear(4, 6) self.l2 = L.Linear(6, 2) end
  function MLP:forward(x) return self.l2(F.tanh(self.l1(x))) end
  T.random.seed(7)
  local model = L.Classifier(MLP())
  for p in model:params() do p.array = p.array:astype(dtype or 'float64') end
  return model
end

local function call_loss(model, in_arrays) return model(unpack(in_arrays, 1, #in_arrays)) end

-- One process: the gradient of each step is the sum, in process order, of
-- the gradients of the n batches, all at the same parameters.
local function reference_run(parts, model, make_optimizer, steps)
  local opt = make_optimizer()
  opt:setup(model)
  local its = make_iterators(parts)
  for _ = 1, steps do
    local sums = {}
    for k = 1, #its do
      model:cleargrads()
      local loss = call_loss(model, chainer.dataset.concat_examples(its[k]:next()))
      loss:backward()
      for name, p in model:namedparams() do
        sums[name] = sums[name] and sums[name] + p.grad or p.grad
      end
    end
    for name, p in model:namedparams() do p.grad = sums[name] end
    opt:update()
  end
  return model, opt
end

local function max_param_diff(a, b)
  local worst = 0
  local pb = {}
  for name, p in b:namedparams() do pb[name] = p end
  for name, p in a:namedparams() do
    worst = math.max(worst, (p.array:astype('float64') - pb[name].array:astype('float64')):abs():max():item())
  end
  return worst
end

-- The pids of this process's children (from /proc: zombies included).
local function child_pids()
  local me = libc.getpid()
  local p = io.popen('ls /proc')
  local entries = {}
  for entry in p:lines() do if entry:match('^%d+$') then entries[#entries + 1] = entry end end
  p:close()   -- (the listing's own shell is gone after this)
  local out = {}
  for _, entry in ipairs(entries) do
    local f = io.open('/proc/' .. entry .. '/stat')
    if f then
      local stat = f:read('*l') or ''
      f:close()
      local ppid = stat:match('^%d+ %b() %S (%d+)')
      if tonumber(ppid) == me then out[#out + 1] = tonumber(entry) end
    end
  end
  return out
end

-- A process's state letter (R, S, Z, ...), nil when it is gone.
local function state_of(pid)
  local f = io.open('/proc/' .. pid .. '/stat')
  if f == nil then return nil end
  local stat = f:read('*a')
  f:close()
  return stat:match('^%d+ %b() (%a)')
end

local function alive(pid)
  local f = io.open('/proc/' .. pid .. '/stat')
  if f then f:close() return true end
  return false
end

-- A dataset whose examples are those of `base`, except that get_example(i)
-- calls act() for the listed indices.
local function booby_trapped(base, traps)
  local ds = {}
  function ds:len() return base:len() end
  function ds:get_example(i)
    if traps[i] then traps[i]() end
    return base:get_example(i)
  end
  return ds
end

local function quiet(fn)
  -- the constructor's warning about lr/eps goes to stderr
  local real = io.stderr
  io.stderr = { write = function() end, flush = function() end }
  local ok, a = pcall(fn)
  io.stderr = real
  if not ok then error(a, 0) end
  return a
end

describe('MultiprocessParallelUpdater', function()
  it('is available here (fork and shared memory)', function()
    assert.is_true(MPU.available())
  end)

  for _, case in ipairs({
    { 'MomentumSGD (lr / n)', function() return O.MomentumSGD(0.1) end, function(n) return O.MomentumSGD(0.1 / n) end },
    { 'Adam (eps * n)', function() return O.Adam(0.01) end, function(n) return O.Adam(0.01, 0.9, 0.999, 1e-8 * n) end },
    { 'float32, SGD', function() return O.SGD(0.1) end, function(n) return O.SGD(0.1 / n) end, 'float32' },
    { 'float16, SGD', function() return O.SGD(0.1) end, function(n) return O.SGD(0.1 / n) end, 'float16' },
  }) do
    it('gives the parameters of one process summing the batches\' gradients: ' .. case[1], function()
      local n, steps, dtype = 3, 4, case[4]
      local parts = split_data(n, 2 * BATCH, dtype)
      local model = float64_model(dtype)
      local opt = case[2]()
      opt:setup(model)
      local u = quiet(function()
        return MPU(make_iterators(parts), opt, { devices = { '@numpy', -1, 'cpu' } })
      end)
      for _ = 1, steps do u:update() end
      local pids = u:worker_pids()
      assert.are.equal(n - 1, #pids)
      u:finalize()
      local ref = reference_run(parts, float64_model(dtype), function() return case[3](n) end, steps)
      -- the same operations in the same order: float64 to rounding, the others exactly
      assert.is_true(max_param_diff(model, ref) <= (dtype and 0 or 1e-10))
      -- a step really moved the parameters
      assert.is_true(max_param_diff(model, float64_model(dtype)) > 1e-3)
      assert.are.equal(dtype or 'float64', model.predictor.l1.W.dtype)
      for _, pid in ipairs(pids) do assert.is_false(alive(pid)) end
    end)
  end

  it('starts the workers after the first forward pass: lazily initialized parameters work', function()
    local parts = split_data(2, 2 * BATCH, 'float32')
    local function lazy_model()
      T.random.seed(11)
      return L.Classifier(L.Linear(nil, 2))
    end
    local model = lazy_model()
    local opt = O.SGD(0.1)
    opt:setup(model)
    local u = quiet(function() return MPU(make_iterators(parts), opt, { devices = { -1, -1 } }) end)
    assert.is_nil(model.predictor.W.array)
    for _ = 1, 3 do u:update() end
    u:finalize()
    local ref = reference_run(parts, lazy_model(), function() return O.SGD(0.05) end, 3)
    assert.are.same({ 2, 4 }, model.predictor.W.shape)
    assert.are.equal(0, max_param_diff(model, ref))
  end)

  it('adjusts the optimizer as Chainer: lr / n, eps * n, eps * n^2', function()
    local function adjusted(opt, n)
      opt:setup(float64_model())
      local devices = {}
      for k = 1, n do devices[k] = '@numpy' end
      local parts = split_data(n, BATCH)
      quiet(function() return MPU(make_iterators(parts), opt, { devices = devices }) end)
      return opt
    end
    assert.are.equal(0.01 / 2, adjusted(O.SGD(0.01), 2).lr)
    assert.are.equal(1e-8 * 4, adjusted(O.Adam(), 4).eps)
    assert.are.equal(1e-8 * 2, adjusted(O.AdamW(), 2).eps)
    assert.are.equal(1e-6 * 9, adjusted(O.AdaDelta(), 3).eps)
    assert.are.equal(0.01, adjusted(O.SGD(0.01), 1).lr)
  end)

  it('names the devices main first, then the other names sorted', function()
    local parts = split_data(2, BATCH)
    local model = float64_model()
    local opt = O.SGD(0.1)
    opt:setup(model)
    local traps = { [1] = function() error('trap in b') end }
    local its = make_iterators(parts)
    its[2] = iterators.SerialIterator(booby_trapped(parts[2], traps), BATCH, { shuffle = false })
    local u = quiet(function() return MPU(its, opt, { devices = { main = '@numpy', b = '@numpy' } }) end)
    local ok, err = pcall(u.update, u)
    assert.is_false(ok)
    assert.truthy(tostring(err):find('worker process 1 (device b: @numpy, pid ', 1, true))
    assert.truthy(tostring(err):find('trap in b', 1, true))
    u:finalize()
  end)

  it("raises a worker's error in the master, naming the worker; the workers carry on", function()
    local parts = split_data(3, 2 * BATCH)
    local model = float64_model()
    local opt = O.SGD(0.1)
    opt:setup(model)
    local its = make_iterators(parts)
    -- worker 2 fails on its second batch only
    local traps = { [BATCH + 1] = function() error('bad example in worker 2') end }
    its[3] = iterators.SerialIterator(booby_trapped(parts[3], traps), BATCH, { shuffle = false })
    local u = quiet(function() return MPU(its, opt, { devices = { '@numpy', '@numpy', '@numpy' } }) end)
    u:update()
    local before = model.predictor.l1.W.array:copy()
    local ok, err = pcall(u.update, u)
    assert.is_false(ok)
    assert.truthy(tostring(err):find('MultiprocessParallelUpdater: worker process 2 (device 3: @numpy, pid ', 1, true))
    assert.truthy(tostring(err):find('bad example in worker 2', 1, true))
    -- the failed step changed nothing; the next one runs
    assert.are.equal(0, (model.predictor.l1.W.array - before):abs():max():item())
    u:update()
    assert.are.equal(2, #u:worker_pids())
    u:finalize()
  end)

  it('reports a worker that dies, stops the others and starts fresh ones on the next update', function()
    local parts = split_data(3, 4 * BATCH)
    local model = float64_model()
    local opt = O.SGD(0.1)
    opt:setup(model)
    local u = quiet(function() return MPU(make_iterators(parts), opt, { devices = { -1, -1, -1 } }) end)
    u:update()
    local pids = u:worker_pids()
    libc.C.kill(pids[1], 9)
    local ok, err = pcall(u.update, u)
    assert.is_false(ok)
    assert.truthy(tostring(err):find('worker process 1 (device 2: @numpy, pid ' .. pids[1] .. ') was killed by ' ..
      'signal 9 (SIGKILL); all worker processes were stopped', 1, true))
    assert.are.equal(0, #u:worker_pids())
    assert.is_false(alive(pids[2]))
    u:update()
    assert.are.equal(2, #u:worker_pids())
    u:finalize()
  end)

  it('does not wait forever for a worker that hangs (worker_timeout)', function()
    local parts = split_data(2, 2 * BATCH)
    local model = float64_model()
    local opt = O.SGD(0.1)
    opt:setup(model)
    local its = make_iterators(parts)
    local traps = { [BATCH + 1] = function() libc.C.poll(nil, 0, 600000) end }   -- ten minutes
    its[2] = iterators.SerialIterator(booby_trapped(parts[2], traps), BATCH, { shuffle = false })
    local u = quiet(function() return MPU(its, opt, { devices = { '@numpy', '@numpy' }, worker_timeout = 1 }) end)
    u:update()
    local pid = u:worker_pids()[1]
    local started = libc.monotonic()
    local ok, err = pcall(u.update, u)
    assert.is_false(ok)
    assert.truthy(tostring(err):find('did not finish its step within worker_timeout = 1 s', 1, true))
    assert.is_true(libc.monotonic() - started < 60)
    assert.is_false(alive(pid))
    u:finalize()
  end)

  it('finalize leaves no child processes, also when a worker runs its own MultiprocessIterator', function()
    local parts = split_data(3, 2 * BATCH)
    local model = float64_model()
    local opt = O.SGD(0.1)
    opt:setup(model)
    local its = make_iterators(parts)
    its[2] = iterators.MultiprocessIterator(parts[2], BATCH, { shuffle = false, n_processes = 1 })
    local u = quiet(function() return MPU(its, opt, { devices = { '@numpy', '@numpy', '@numpy' } }) end)
    assert.are.same({}, child_pids())
    u:update()
    u:update()
    assert.are.equal(2, #child_pids())
    u:finalize()
    assert.are.same({}, child_pids())
    assert.are.same({}, u:worker_pids())
  end)

  it('leaves no worker behind when the master process is killed', function()
    local script = [[
      package.path = 'lua/?.lua;lua/?/init.lua;' .. package.path
      local chainer = require 'chainer'
      local libc = require 'chainer._libc'
      local x = chainer.tensor.random.normal(0, 1, { 16, 3 }, 'float32')
      local ds = chainer.datasets.TupleDataset(x, chainer.tensor.zeros({ 16 }, 'int32'))
      local its = {}
      for k = 1, 3 do its[k] = chainer.iterators.SerialIterator(ds, 4) end
      local opt = chainer.optimizers.SGD()
      opt:setup(chainer.links.Classifier(chainer.links.Linear(3, 2)))
      local u = chainer.training.updaters.MultiprocessParallelUpdater(its, opt, { devices = { -1, -1, -1 } })
      u:update()
      io.write(table.concat(u:worker_pids(), ' '), '\n'); io.flush()
      libc.C.kill(libc.getpid(), 9)
    ]]
    local path = os.tmpname()
    local f = assert(io.open(path, 'w')); f:write(script); f:close()
    local p = io.popen(require('helpers').lua_interpreter() .. ' ' .. path .. ' 2>/dev/null')
    local out = p:read('*a')
    p:close()
    os.remove(path)
    local pids = {}
    for pid in out:gmatch('%d+') do pids[#pids + 1] = tonumber(pid) end
    assert.are.equal(2, #pids, out)
    for _, pid in ipairs(pids) do
      for _ = 1, 100 do   -- PR_SET_PDEATHSIG kills them at once; allow 5 s for a busy machine
        local st = state_of(pid)
        if st == nil or st == 'Z' then break end
        libc.C.poll(nil, 0, 50)
      end
      local st = state_of(pid)
      assert.is_true(st == nil or st == 'Z', 'worker ' .. pid .. ' still running (' .. tostring(st) .. ')')
    end
  end)

  it('runs in a Trainer, reports the master\'s loss, and its snapshot resumes like ParallelUpdater\'s', function()
    local dir = H.tmpdir()
    local parts = split_data(2, 2 * BATCH)
    local function build()
      local model = float64_model()
      local opt = O.MomentumSGD(0.1)
      opt:setup(model)
      local u = quiet(function()
        return MPU(make_iterators(parts), opt, { devices = { main = '@numpy', second = '@numpy' } })
      end)
      return model, opt, u
    end
    local model, _, u = build()
    local trainer = training.Trainer(u, { 2, 'epoch' }, { out = dir })
    local losses = {}
    trainer:extend(function(tr) losses[#losses + 1] = tr.observation['main/loss'] end, { trigger = { 1, 'iteration' } })
    trainer:extend(extensions.snapshot(), { trigger = { 2, 'iteration' } })
    trainer:run()
    assert.are.equal(4, u.iteration)
    assert.are.equal(4, #losses)
    assert.are.same({}, child_pids())   -- the trainer finalized the updater
    -- a fresh updater loading the snapshot has the master's state
    local model2, opt2, u2 = build()
    local trainer2 = training.Trainer(u2, { 2, 'epoch' }, { out = dir })
    chainer.serializers.load_npz(dir .. '/snapshot_iter_4', trainer2)
    assert.are.equal(4, u2.iteration)
    assert.are.equal(2, u2.epoch)
    assert.are.equal(4, opt2.t)
    assert.are.equal(0, max_param_diff(model, model2))
    u2:update()
    assert.are.equal(1, #u2:worker_pids())
    u2:finalize()
    H.rmdir(dir)
  end)

  describe('bad input', function()
    local function setup()
      local opt = O.SGD(0.1)
      opt:setup(float64_model())
      return make_iterators(split_data(2, BATCH)), opt
    end
    local function fails(pattern, fn)
      local ok, err = pcall(quiet, fn)
      assert.is_false(ok)
      assert.truthy(tostring(err):find(pattern, 1, true), tostring(err))
    end
    it('a GPU device says this updater runs on CPU devices', function()
      local its, opt = setup()
      fails("device second is cuda:0, a GPU: chainlua's MultiprocessParallelUpdater runs its processes on CPU devices",
        function() return MPU(its, opt, { devices = { main = '@numpy', second = 'cuda:0' } }) end)
      fails('device 2 is 1, a GPU', function() return MPU(its, opt, { devices = { -1, 1 } }) end)
    end)
    it('devices: missing, without main, not a device', function()
      local its, opt = setup()
      fails('devices must be a list of devices or a table', function() return MPU(its, opt) end)
      fails("devices needs a 'main' device", function() return MPU(its, opt, { devices = { a = -1, b = -1 } }) end)
      fails('is not a device', function() return MPU(its, opt, { devices = { -1, 'tpu' } }) end)
    end)
    it('one iterator per device', function()
      local its, opt = setup()
      fails('2 iterators for 3 devices', function() return MPU(its, opt, { devices = { -1, -1, -1 } }) end)
      fails('iterators must be a list of iterators', function() return MPU(its[1], opt, { devices = { -1 } }) end)
      local other = iterators.SerialIterator(split_data(1, 2 * BATCH)[1], BATCH)
      fails("the iterators' datasets differ in length", function()
        return MPU({ its[1], other }, opt, { devices = { -1, -1 } })
      end)
    end)
    it('options: unknown, worker_timeout', function()
      local its, opt = setup()
      fails("unknown option 'device'", function() return MPU(its, opt, { devices = { -1, -1 }, device = -1 }) end)
      fails('worker_timeout must be a positive number of seconds (got 0)', function()
        return MPU(its, opt, { devices = { -1, -1 }, worker_timeout = 0 })
      end)
    end)
  end)
end)

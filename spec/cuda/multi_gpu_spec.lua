-- Multi-GPU on a real GPU machine (issue 15's multi-GPU part, issue 16's
-- GPU communicators): NCCL's collectives (chainer.cuda.nccl), F.copy
-- between devices (model parallelism), ParallelUpdater on two GPUs against
-- the same updater on the CPU, and chainermn's GPU models under mpirun.
-- Tagged `gpu`; without a GPU one pending line.  The parts that need two
-- GPUs, NCCL or mpirun say so in a pending line where they are missing.
--
-- NOTE: written without access to a GPU; not yet run on one.
local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local L = chainer.links
local cuda = require 'chainer.cuda'
local nccl = require 'chainer.cuda.nccl'
local G = require 'cuda.helpers'

local function max_err(a, b) return (a:to_cpu():astype('float64') - b:to_cpu():astype('float64')):abs():max():item() end

describe('multi-GPU #gpu', function()
  if G.without_gpu('multi-GPU') then return end
  local n = cuda.device_count()
  local have_nccl, nccl_why = nccl.available()

  describe('F.copy between the host and cuda:0', function()
    it('moves activations forward and gradients back', function()
      local x = chainer.Variable(T.random.uniform(-1, 1, { 3, 4 }, 'float32'))
      local y = F.copy(x, 0)
      assert.are.equal('cuda:0', y.array.device)
      local z = F.sum(F.copy(y * 2, -1))
      z:backward()
      assert.are.equal('cpu', x.grad.device)
      assert.are.equal(0, max_err(x.grad, T.full({ 3, 4 }, 2, 'float32')), 'F.copy gradient')
    end)
  end)

  describe('NCCL on one device', function()
    if not have_nccl then
      it('needs NCCL', function() pending('NCCL could not be loaded, its GPU specs not run: ' .. nccl_why) end)
      return
    end

    it('reports its version and makes 128-byte ids', function()
      local v = nccl.get_version()
      assert.is_true(v >= 2000, 'NCCL version code ' .. v)
      local a, b = nccl.get_unique_id(), nccl.get_unique_id()
      assert.are.equal(128, #a)
      assert.are_not.equal(a, b)
    end)

    it('all_reduce, reduce and bcast on a one-rank communicator for every dtype', function()
      local comm = nccl.init_all({ 0 })[1]
      for _, dt in ipairs({ 'int8', 'uint8', 'int32', 'int64', 'float16', 'float32', 'float64' }) do
        local x = G.rand(dt, { 5, 3 })
        local gx = x:to_gpu()
        for _, op in ipairs({ 'sum', 'prod', 'max', 'min' }) do
          local out = T.zeros({ 5, 3 }, dt, 0)
          comm:all_reduce(gx, out, op)
          assert.are.equal(0, max_err(out, x), 'all_reduce ' .. op .. ' ' .. dt)
          out:fill_(0)
          comm:reduce(gx, out, op, 0)
          assert.are.equal(0, max_err(out, x), 'reduce ' .. op .. ' ' .. dt)
        end
      end
      for _, dt in ipairs({ 'bool', 'int16', 'float32' }) do   -- bool and int16 travel as bytes
        local x = G.rand(dt, { 4, 2 })
        local out = comm:bcast(x:to_gpu(), T.zeros({ 4, 2 }, dt, 0), 0)
        assert.are.same(x:tolist(), out:to_cpu():tolist(), 'bcast ' .. dt)
      end
      comm:destroy()
    end)

    it('refuses what NCCL cannot take, naming the argument', function()
      local comm = nccl.init_all({ 0 })[1]
      local g = T.ones({ 4 }, 'float32', 0)
      local _, err = pcall(comm.all_reduce, comm, T.ones({ 4 }, 'float32'), g)
      assert.matches("nccl all_reduce: argument 'send' is on the CPU", err, 1, true)
      _, err = pcall(comm.all_reduce, comm, T.ones({ 4 }, 'int16', 0))
      assert.matches('nccl all_reduce: NCCL cannot sum int16 data', err, 1, true)
      _, err = pcall(comm.all_reduce, comm, T.ones({ 4, 2 }, 'float32', 0):transpose())
      assert.matches("argument 'send' is not C-contiguous", err, 1, true)
      comm:destroy()
      assert.has_error(function() comm:all_reduce(g) end, 'nccl all_reduce: this communicator has been destroyed')
    end)
  end)

  describe('two GPUs', function()
    if n < 2 then
      it('needs 2 GPUs', function()
        pending(string.format('this machine has %d GPU: the two-GPU specs (NCCL between devices, F.copy between ' ..
          'GPUs, ParallelUpdater on cuda:0 and cuda:1) need 2', n))
      end)
      return
    end

    it('F.copy moves a model-parallel forward and backward between cuda:0 and cuda:1', function()
      T.random.seed(3)
      local l1, l2 = L.Linear(4, 6), L.Linear(6, 2)
      local c1, c2 = l1:copy('copy'), l2:copy('copy')
      l1:to_device(0)
      l2:to_device(1)
      local x = T.random.uniform(-1, 1, { 5, 4 }, 'float32')
      local y = l2(F.copy(F.relu(l1(F.copy(x, 0))), 1))
      assert.are.equal('cuda:1', y.array.device)
      F.sum(y):backward()
      F.sum(c2(F.relu(c1(x)))):backward()
      assert.are.equal('cuda:0', l1.W.grad.device)
      assert.are.equal('cuda:1', l2.W.grad.device)
      G.agree(l1.W.grad:to_device(0), c1.W.grad, 'l1.W.grad')
      assert.is_true(max_err(l2.W.grad, c2.W.grad) < 1e-5, 'l2.W.grad')
    end)

    if have_nccl then
      it('NCCL across cuda:0 and cuda:1: reduce to the root, bcast, all_reduce in one group each', function()
        local comms = nccl.init_all({ 0, 1 })
        local a, b = G.rand('float32', { 7, 3 }), G.rand('float32', { 7, 3 })
        local ga, gb = a:to_device(0), b:to_device(1)
        local sum = T.zeros({ 7, 3 }, 'float32', 0)
        nccl.group(function()
          comms[1]:reduce(ga, sum, 'sum', 0)
          comms[2]:reduce(gb, nil, 'sum', 0)
        end)
        assert.is_true(max_err(sum, a + b) < 1e-6, 'reduce')
        local out = T.zeros({ 7, 3 }, 'float32', 1)
        nccl.group(function()
          comms[1]:bcast(ga, nil, 0)
          comms[2]:bcast(nil, out, 0)
        end)
        assert.are.equal(0, max_err(out, a), 'bcast')
        nccl.group(function()
          comms[1]:all_reduce(ga, nil, 'max')
          comms[2]:all_reduce(gb, nil, 'max')
        end)
        assert.are.equal(0, max_err(ga, T.maximum(a, b)), 'all_reduce max on cuda:0')
        assert.are.equal(0, max_err(gb, T.maximum(a, b)), 'all_reduce max on cuda:1')
        local _, err = pcall(comms[1].all_reduce, comms[1], gb)
        assert.matches('the buffers are on cuda:1 but the communicator is on cuda:0', err, 1, true)
      end)
    end

    -- ParallelUpdater on {main = 0, second = 1} against the same on the CPU
    local function train(devices, use_nccl)
      T.random.seed(1)
      local Net = chainer.Chain:extend('MultiGpuSpecNet')
      function Net:init() self.l1 = L.Linear(4, 16) self.l2 = L.Linear(16, 3) end
      function Net:forward(x) return self.l2(F.relu(self.l1(x))) end
      local model = L.Classifier(Net())
      local opt = chainer.optimizers.MomentumSGD(0.05):setup(model)
      T.random.seed(2)
      local x = T.random.normal(0, 1, { 48, 4 }, 'float32')
      local t = T.random.randint(0, 3, { 48 }):astype('int32')
      local it = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), 12, { shuffle = false })
      local u = chainer.training.updaters.ParallelUpdater(it, opt, { devices = devices })
      if use_nccl == false then u._comms = false end   -- the copies way
      for _ = 1, 4 do u:update() end
      return model, u
    end
    local cpu = nil
    for _, way in ipairs({ { 'NCCL', true }, { 'device copies', false } }) do
      it('trains on cuda:0 and cuda:1 as on the CPU (' .. way[1] .. ')', function()
        if way[2] and not have_nccl then return pending('NCCL could not be loaded: ' .. nccl_why) end
        cpu = cpu or train({ main = -1, second = -1 })
        local gpu, u = train({ main = 0, second = 1 }, way[2])
        assert.are.same({ 0, 1 }, u._gpus)
        assert.are.equal(way[2], u._comms ~= false)
        for path, p in gpu:namedparams() do
          local ref
          for q_path, q in cpu:namedparams() do if q_path == path then ref = q end end
          assert.are.equal('cuda:0', p.array.device, path)
          local e = max_err(p.array, ref.array)
          assert(e < 1e-5, string.format('%s differs from the CPU by %g', path, e))
        end
        for path, p in u._models.second:namedparams() do
          assert.are.equal('cuda:1', p.array.device, path)
        end
      end)
    end
  end)

  describe('chainermn with GPU models', function()
    local H = require 'examples.helpers'
    local helpers = require 'helpers'
    local _, mpirun_status = H.run('command -v mpirun')
    local function ranks(name)
      return H.run(string.format("LUA_PATH='%s' OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 " ..
        'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun -np 2 --oversubscribe %s ' ..
        'spec/chainermn/device_program.lua %s gpu', package.path, helpers.lua_interpreter(), name))
    end
    local function all_ok(out, code)
      assert.are.equal(0, code, out)
      for _, check in ipairs({ 'device mean grad float64', 'device mean grad float32', 'device bcast data',
        'device layouts' }) do
        for r = 0, 1 do
          local line = out:match('check ' .. check .. ' rank ' .. r .. ' ([^\n]*)')
          assert(line == 'ok', string.format('check %s on rank %d: %s\n%s', check, r, tostring(line), out))
        end
      end
    end
    it("'flat' moves GPU gradients (CUDA-aware MPI or host staging) on 2 ranks", function()
      if mpirun_status ~= 0 then return pending('mpirun is not installed here: chainermn GPU specs not run') end
      all_ok(ranks('flat'))
    end)
    it("'pure_nccl' moves them through NCCL, one GPU per rank", function()
      if mpirun_status ~= 0 then return pending('mpirun is not installed here') end
      if not have_nccl then return pending('NCCL could not be loaded: ' .. nccl_why) end
      if n < 2 then return pending('pure_nccl with 2 ranks needs 2 GPUs; this machine has ' .. n) end
      all_ok(ranks('pure_nccl'))
    end)
  end)
end)

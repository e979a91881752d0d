-- The third program chainermn_spec.lua starts alone and under
-- `mpirun -np 2`: the model-level collectives of chainermn/device_sync.lua
-- (GPU models: NCCL, CUDA-aware MPI or host staging).
--   device_program.lua <communicator> [host|gpu]
-- 'host' (the default, CI) runs device_sync's packing and staging on host
-- arrays; 'gpu' puts each rank's model on cuda:(intra_rank mod GPUs) and
-- goes through the communicator's own methods (spec/cuda/multi_gpu_spec.lua
-- runs it on a GPU machine).  Output as ranks_program.lua's.
local S = require 'spec.chainermn.program_setup'
local chainer, T, L, F = S.chainer, S.T, S.L, S.F
local comm, rank, size = S.comm, S.rank, S.size
local check, expect, mlp = S.check, S.expect, S.mlp
local device_sync = require 'chainermn.device_sync'

local on_gpu = arg[2] == 'gpu'
local device = -1
if on_gpu then device = comm.intra_rank % require('chainer.cuda').device_count() end

-- The collectives under test: the communicator's methods on a GPU (which
-- must route GPU models to device_sync), device_sync's directly on the host.
local function mean_grad(model)
  if on_gpu then comm:multi_node_mean_grad(model) else device_sync.multi_node_mean_grad(comm, model) end
end
local function bcast_data(model)
  if on_gpu then comm:bcast_data(model) else device_sync.bcast_data(comm, model) end
end


for _, dtype in ipairs({ 'float64', 'float32' }) do
  check('device mean grad ' .. dtype, function()
    local model = mlp(300 + rank, dtype)
    model:to_device(device)
    T.random.seed(40 + rank)
    local x = T.random.normal(0, 1, { 4, 5 }):astype(dtype):to_device(device)
    local t = T.random.randint(0, 3, { 4 }):astype('int32'):to_device(device)
    model:cleargrads()
    F.softmax_cross_entropy(model(x), t):backward()
    -- the reference: the host gradients summed with the host allreduce
    -- (in the parameters' order, the same on every rank)
    local ref = {}
    for name, p in model:namedparams() do ref[name] = T.mul(comm:allreduce(p.grad:to_cpu()), 1 / size) end
    mean_grad(model)
    for name, p in model:namedparams() do
      expect(p.grad.device == T.device_name(device), name .. "'s gradient left its device: " .. p.grad.device)
      local d = S.max_diff(p.grad:to_cpu(), ref[name])
      -- two ranks: one sum and an exact halving on both sides, the same bits
      expect(size > 2 and d < 1e-6 or d == 0, string.format('%s: mean differs by %g', name, d))
    end
  end)
end

check('device bcast data', function()
  local model = mlp(400 + rank, 'float32')
  model:to_device(device)
  local root = {}
  for name, p in model:namedparams() do root[name] = comm:bcast(p.array:to_cpu(), 0) end
  bcast_data(model)
  for name, p in model:namedparams() do
    expect(S.max_diff(p.array:to_cpu(), root[name]) == 0, name .. ' is not rank 0 value')
    expect(p.array.device == T.device_name(device), name .. ' left its device')
  end
end)

check('device layouts', function()
  -- rank 1 has another model: every rank raises, naming both
  local model = chainer.Sequential(L.Linear(5, rank == 1 and 4 or 3))
  model:to_device(device)
  model(T.zeros({ 1, 5 }, 'float32', device))
  local ok, err = pcall(bcast_data, model)
  if size == 1 then
    expect(ok, 'one rank cannot disagree: ' .. tostring(err))
  else
    expect(not ok and tostring(err):find('bcast_data: the ranks passed different arguments', 1, true),
      'expected the layout error, got ' .. tostring(err))
  end
end)

check('cuda aware query', function()
  local v = device_sync.cuda_aware()
  expect(v == true or v == false, 'cuda_aware() must answer true or false, got ' .. tostring(v))
end)

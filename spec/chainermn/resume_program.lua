-- Started by chainermn_spec.lua under `mpirun -np 2` with the chainlua
-- executable:  resume_program.lua <snapshot|checkpointer> <out> <first|resume>
--
-- 'first' trains a multi-node MLP with a trainer that saves every
-- iteration (multi_node_snapshot, or the multi-node checkpointer), records
-- each rank's parameter checksum per iteration in <out>/sums.<rank>, and
-- rank 1 fails at iteration 4, which aborts the job (the other rank is
-- killed).  'resume' builds the same job, loads, checks that every rank
-- resumed at one iteration with the parameters it had then, and trains to
-- iteration 6.  Check lines as ranks_program.lua's.
local chainer = require 'chainer'
local chainermn = require 'chainermn'
local T, L, F = chainer.tensor, chainer.links, chainer.functions
local training, extensions = chainer.training, chainer.training.extensions

local mode, out, phase = arg[1], arg[2], arg[3]
local comm = chainermn.create_communicator('flat')
local rank = comm.rank

local check, expect = require('spec.chainermn.rank_checks')(rank)

-- different initial parameters per rank: the first update broadcasts rank 0's
chainer.config.dtype = 'float64'
T.random.seed(100 + rank)
local model = L.Classifier(chainer.Sequential(L.Linear(4, 8), F.tanh, L.Linear(8, 3)))
local opt = chainermn.create_multi_node_optimizer(chainer.optimizers.MomentumSGD({ lr = 0.1 }), comm)
opt:setup(model)
T.random.seed(7)
local x = T.random.normal(0, 1, { 32, 4 }):astype('float64')
local t = T.random.randint(0, 3, { 32 }):astype('int32')
local train = chainermn.scatter_dataset(chainer.datasets.TupleDataset(x, t), comm)
local it = chainer.iterators.SerialIterator(train, 4, { shuffle = false })
local trainer = training.Trainer(training.StandardUpdater(it, opt), { 6, 'iteration' }, { out = out })

local function checksum()
  local s = 0
  for _, p in model:namedparams() do s = s + p.array:sum():item() end
  return string.format('%.17g', s)
end

local saver
if mode == 'snapshot' then
  saver = chainermn.multi_node_snapshot(comm, extensions.snapshot({ autoload = true }), {})
  trainer:extend(saver, { trigger = { 1, 'iteration' } })
else
  saver = chainermn.create_multi_node_checkpointer('run', comm)
  trainer:extend(saver, { trigger = { 1, 'iteration' } })
end

-- (both phases have the same extensions: a trainer's snapshot holds their triggers)
trainer:extend(function(tr)
  if phase ~= 'first' then return end
  local f = assert(io.open(out .. '/sums.' .. rank, 'a'))
  f:write(tr.updater.iteration, ' ', checksum(), '\n')
  f:close()
end, { priority = 300, name = 'record' })
trainer:extend(function(tr)
  if phase == 'first' and rank == 1 and tr.updater.iteration == 4 then
    error('rank 1 stops at iteration 4 on purpose')
  end
end, { priority = 250, name = 'fail' })

if phase == 'first' then
  trainer:run()
  print('the job was not stopped')
  return
end

-- resume
local sums = {}
for line in io.lines(out .. '/sums.' .. rank) do
  local i, s = line:match('^(%d+) (%S+)$')
  sums[tonumber(i)] = s
end
local resumed
check('resumes', function()
  if mode == 'snapshot' then saver:initialize(trainer) else saver:maybe_load(trainer, opt) end
  resumed = trainer.updater.iteration
  expect(resumed >= 3, 'resumed at iteration ' .. resumed)
  local all = comm:allgather(T.array({ resumed }, 'int64'))
  expect(all[1]:item() == all[2]:item(), 'the ranks resumed at different iterations')
  expect(checksum() == sums[resumed], 'parameters ' .. checksum() .. ', at iteration ' .. resumed .. ' they were ' ..
    tostring(sums[resumed]))
end)
check('continues', function()
  trainer:run()
  expect(trainer.updater.iteration == 6, 'stopped at ' .. trainer.updater.iteration)
  -- the multi-node optimizer: after a checkpointer's maybe_load(trainer, opt)
  -- every update updates; after a snapshot the first one only broadcasts
  local lost = mode == 'snapshot' and 2 or 1
  expect(opt.t == 6 - lost, 'the optimizer made ' .. opt.t .. ' updates')
  local all = comm:allgather(T.array({ tonumber(checksum()) }, 'float64'))
  expect(all[1]:item() == all[2]:item(), 'the ranks ended with different parameters')
end)

-- examples/chainermn/mnist/train_mnist.lua: ChainerMN's MNIST example -- the
-- MLP of examples/mnist (784 - unit - unit - 10, Adam) trained data
-- parallel: each rank trains on its shard of MNIST, the gradients averaged
-- over the ranks at every update, and the validation accuracy averaged over
-- the ranks' shards of the test set.  Rank 0 reports.
--
--   OMP_NUM_THREADS=1 mpirun -np 2 chainlua examples/chainermn/mnist/train_mnist.lua --epoch 1
--       [--batchsize 100] [--unit 1000] [--communicator flat|naive|hierarchical] [--out result] [--resume FILE]
--
-- (as root Open MPI also wants OMPI_ALLOW_RUN_AS_ROOT=1
-- OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).  --batchsize is per rank, as in
-- ChainerMN: 2 ranks with 100 each make batches of 200.  Without mpirun it
-- runs as one rank.  MNIST is read from $CHAINER_DATASET_ROOT/mnist by
-- every rank (docs/chainermn.md: scatter_dataset).
local chainer = require 'chainer'
local chainermn = require 'chainermn'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'

local ap = require('chainer.utils.argparse')('ChainerMN example: MNIST')
ap.prog = 'chainlua examples/chainermn/mnist/train_mnist.lua'
ap:option('--batchsize', '-b', { type = 'number', default = 100, help = 'Number of images in each mini-batch (per rank)' })
-- ChainerMN's own example runs 'naive' on CPUs because its packed
-- communicators are GPU-only; chainlua's 'flat' packs host memory too (one
-- allreduce per dtype in the gradient bucket, docs/chainermn.md), so it is
-- the default here.
ap:option('--communicator', { default = 'flat', help = "Type of communicator: 'flat', 'naive' or 'hierarchical' (MPI on host memory)" })
ap:option('--epoch', '-e', { type = 'number', default = 20, help = 'Number of sweeps over the dataset to train' })
ap:option('--out', '-o', { default = 'result', help = 'Directory to output the result' })
ap:option('--resume', '-r', { default = '', help = 'Resume the training from snapshot' })
ap:option('--unit', '-u', { type = 'number', default = 1000, help = 'Number of units' })
ap:option('--seed', { type = 'number', help = 'Random seed (initial weights; rank 0 broadcasts its own)' })
ap:option('--update-interval', { type = 'number', default = 100, help = 'ProgressBar refresh interval (iterations)' })
local args = ap:parse(arg)

if args.seed then chainer.tensor.random.seed(args.seed) end

-- Prepare the ChainerMN communicator.
local comm = chainermn.create_communicator(args.communicator)

if comm.rank == 0 then
  print('==========================================')
  print('Num process (COMM_WORLD): ' .. comm.size)
  print('Using ' .. args.communicator .. ' communicator')
  print('Num unit: ' .. args.unit)
  print('Num Minibatch-size: ' .. args.batchsize)
  print('Num epoch: ' .. args.epoch)
  print('==========================================')
end

local MLP = chainer.Chain:extend('MLP')
function MLP:init(n_units, n_out)
  -- the size of the inputs to each layer is inferred at the first call
  self.l1 = L.Linear(nil, n_units)   -- n_in -> n_units
  self.l2 = L.Linear(nil, n_units)   -- n_units -> n_units
  self.l3 = L.Linear(nil, n_out)     -- n_units -> n_out
end
function MLP:forward(x)
  local h1 = F.relu(self.l1(x))
  local h2 = F.relu(self.l2(h1))
  return self.l3(h2)
end

local model = L.Classifier(MLP(args.unit, 10))

-- Create a multi node optimizer from a standard Chainer optimizer: its first
-- update broadcasts rank 0's parameters, every later one averages the
-- gradients over the ranks.
local optimizer = chainermn.create_multi_node_optimizer(chainer.optimizers.Adam(), comm)
optimizer:setup(model)

-- Split the dataset: every rank loads MNIST, rank 0 decides the shuffled
-- order, and each rank keeps its shard.
local train, test = chainer.datasets.get_mnist()
train = chainermn.scatter_dataset(train, comm, { shuffle = true })
test = chainermn.scatter_dataset(test, comm, { shuffle = true })

local train_iter = chainer.iterators.SerialIterator(train, args.batchsize)
local test_iter = chainer.iterators.SerialIterator(test, args.batchsize, { ['repeat'] = false, shuffle = false })

local updater = training.StandardUpdater(train_iter, optimizer)
local trainer = training.Trainer(updater, { args.epoch, 'epoch' }, { out = args.out })

-- Create a multi node evaluator from a standard Chainer evaluator.
local evaluator = extensions.Evaluator(test_iter, model)
evaluator = chainermn.create_multi_node_evaluator(evaluator, comm)
trainer:extend(evaluator)

-- Display and output extensions only on one rank (the others would repeat them).
if comm.rank == 0 then
  trainer:extend(extensions.DumpGraph('main/loss'))
  trainer:extend(extensions.LogReport())
  trainer:extend(extensions.PrintReport({ 'epoch', 'main/loss', 'validation/main/loss', 'main/accuracy',
    'validation/main/accuracy', 'elapsed_time' }))
  trainer:extend(extensions.ProgressBar({ update_interval = args.update_interval }))
end

if args.resume ~= '' then
  chainer.serializers.load_npz(args.resume, trainer)
end

trainer:run()

-- examples/chainermn/mnist/train_mnist_model_parallel.lua: ChainerMN's
-- model-parallel MNIST example -- one MLP split over exactly 2 ranks with
-- chainermn.links.MultiNodeChainList:
--   rank 0: x -> Linear(784, unit), relu -> (to rank 1) ... (from rank 1) -> the classifier's loss
--   rank 1: (from rank 0) -> Linear(unit), relu, Linear(10) -> (back to rank 0)
-- Rank 0 holds the data and the labels; rank 1 steps through an empty
-- dataset of the same length, so both make the same number of updates.
--
--   OMP_NUM_THREADS=1 mpirun -np 2 chainlua examples/chainermn/mnist/train_mnist_model_parallel.lua --epoch 1
--       [--batchsize 100] [--unit 1000] [--out result]
local chainer = require 'chainer'
local chainermn = require 'chainermn'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'

local ap = require('chainer.utils.argparse')('ChainerMN example: pipelined neural network')
ap.prog = 'chainlua examples/chainermn/mnist/train_mnist_model_parallel.lua'
ap:option('--batchsize', '-b', { type = 'number', default = 100, help = 'Number of images in each mini-batch' })
ap:option('--epoch', '-e', { type = 'number', default = 20, help = 'Number of sweeps over the dataset to train' })
ap:option('--out', '-o', { default = 'result', help = 'Directory to output the result' })
ap:option('--unit', '-u', { type = 'number', default = 1000, help = 'Number of units' })
ap:option('--update-interval', { type = 'number', default = 100, help = 'ProgressBar refresh interval (iterations)' })
local args = ap:parse(arg)

local comm = chainermn.create_communicator('naive')
if comm.size ~= 2 then
  error('train_mnist_model_parallel: this example runs on exactly 2 processes (got ' .. comm.size ..
    '; start it with mpirun -np 2)', 0)
end

if comm.rank == 0 then
  print('==========================================')
  print('Num unit: ' .. args.unit)
  print('Num Minibatch-size: ' .. args.batchsize)
  print('Num epoch: ' .. args.epoch)
  print('==========================================')
end

-- rank 0's first part: the input layer
local MLP0SubA = chainer.Chain:extend('MLP0SubA')
function MLP0SubA:init(n_out) self.l1 = L.Linear(784, n_out) end
function MLP0SubA:forward(x) return F.relu(self.l1(x)) end

-- rank 0's second part: passes rank 1's output on as the model's output
local MLP0SubB = chainer.Chain:extend('MLP0SubB')
function MLP0SubB:forward(y) return y end

-- rank 1's part: the hidden and output layers
local MLP1Sub = chainer.Chain:extend('MLP1Sub')
function MLP1Sub:init(n_units, n_out)
  self.l2 = L.Linear(nil, n_units)
  self.l3 = L.Linear(nil, n_out)
end
function MLP1Sub:forward(h0) return self.l3(F.relu(self.l2(h0))) end

local MultiNodeChainList = chainermn.links.MultiNodeChainList
local model
if comm.rank == 0 then
  local mlp0 = MultiNodeChainList(comm)
  mlp0:add_link(MLP0SubA(args.unit), nil, 1)
  mlp0:add_link(MLP0SubB(), 1, nil)
  model = L.Classifier(mlp0)
else
  model = MultiNodeChainList(comm)
  model:add_link(MLP1Sub(args.unit, 10), 0, 0)
end

local optimizer = chainer.optimizers.Adam()
optimizer:setup(model)

local train, test = chainer.datasets.get_mnist()
if comm.rank == 1 then
  train = chainermn.datasets.create_empty_dataset(train)
  test = chainermn.datasets.create_empty_dataset(test)
end

local train_iter = chainer.iterators.SerialIterator(train, args.batchsize, { shuffle = false })
local test_iter = chainer.iterators.SerialIterator(test, args.batchsize, { ['repeat'] = false, shuffle = false })

local updater = training.StandardUpdater(train_iter, optimizer)
local trainer = training.Trainer(updater, { args.epoch, 'epoch' }, { out = args.out })
trainer:extend(extensions.Evaluator(test_iter, model))
if comm.rank == 0 then
  trainer:extend(extensions.DumpGraph('main/loss'))
  trainer:extend(extensions.LogReport())
  trainer:extend(extensions.PrintReport({ 'epoch', 'main/loss', 'validation/main/loss', 'main/accuracy',
    'validation/main/accuracy', 'elapsed_time' }))
  trainer:extend(extensions.ProgressBar({ update_interval = args.update_interval }))
end

trainer:run()

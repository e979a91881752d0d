-- examples/mnist/train_mnist.lua: Chainer's MNIST example -- an MLP
-- (784 - unit - unit - 10) trained with Adam through the Trainer.
--
--   chainlua examples/mnist/train_mnist.lua [--epoch 20] [--unit 1000] [--batchsize 100]
--                                           [--gpu N | --device SPEC] [--out result]
--                                           [--resume result/snapshot_iter_N]
--                                           [--train-size N] [--test-size N]
--
-- MNIST is read from $CHAINER_DATASET_ROOT/mnist (see docs/datasets.md).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local datasets = require 'chainer.datasets'
local iterators = require 'chainer.iterators'
local optimizers = require 'chainer.optimizers'
local serializers = require 'chainer.serializers'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'

local ap = require('chainer.utils.argparse')('Chainer example: MNIST')
ap.prog = 'chainlua examples/mnist/train_mnist.lua'
ap:option('--batchsize', '-b', { type = 'number', default = 100, help = 'Number of images in each mini-batch' })
ap:option('--epoch', '-e', { type = 'number', default = 20, help = 'Number of sweeps over the dataset to train' })
ap:option('--frequency', '-f', { type = 'number', default = -1, help = 'Frequency of taking a snapshot (epochs; -1: every epoch)' })
ap:option('--device', '-d', { default = '-1', help = "Device specifier: -1 or 'cpu' for CPU, N or 'cuda:N' for a GPU",
  aliases = { '--gpu', '-g' } })
ap:option('--out', '-o', { default = 'result', help = 'Directory to output the result' })
ap:option('--resume', '-r', { default = '', help = 'Resume the training from snapshot' })
ap:flag('--autoload', { help = 'Automatically load trainer snapshots in case of preemption or other temporary system failure' })
ap:option('--unit', '-u', { type = 'number', default = 1000, help = 'Number of units' })
ap:flag('--noplot', { help = 'Disable PlotReport extension' })
ap:option('--seed', { type = 'number', help = 'Random seed (initial weights and shuffling)' })
ap:option('--threads', { type = 'number', help = 'CPU threads for the math kernels' })
ap:option('--update-interval', { type = 'number', default = 100, help = 'ProgressBar refresh interval (iterations)' })
ap:option('--train-size', { type = 'number', default = 0, help = 'Use only the first N training images (0: all)' })
ap:option('--test-size', { type = 'number', default = 0, help = 'Use only the first N test images (0: all)' })
local args = ap:parse(arg)

if args.seed then chainer.tensor.random.seed(args.seed) end
if args.threads then chainer.set_num_threads(args.threads) end
local device = tonumber(args.device) or args.device

print('Device: ' .. tostring(args.device))
print('# unit: ' .. args.unit)
print('# Minibatch-size: ' .. args.batchsize)
print('# epoch: ' .. args.epoch)
print('')

-- Network definition
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

-- Classifier reports softmax cross entropy loss and accuracy at every
-- iteration, which the extensions below use.
local model = L.Classifier(MLP(args.unit, 10))
if device ~= -1 and device ~= 'cpu' then model:to_device(device) end

local optimizer = optimizers.Adam():setup(model)

local train, test = datasets.get_mnist()
if args.train_size > 0 and args.train_size < train:len() then train = datasets.SubDataset(train, 0, args.train_size) end
if args.test_size > 0 and args.test_size < test:len() then test = datasets.SubDataset(test, 0, args.test_size) end
local train_iter = iterators.SerialIterator(train, args.batchsize)
local test_iter = iterators.SerialIterator(test, args.batchsize, { loop = false, shuffle = false })

local updater = training.StandardUpdater(train_iter, optimizer, { device = device })
local trainer = training.Trainer(updater, { args.epoch, 'epoch' }, { out = args.out })

-- Evaluate the model with the test dataset for each epoch
trainer:extend(extensions.Evaluator(test_iter, model, { device = device }))
-- Dump a computational graph from 'loss' variable at the first iteration
trainer:extend(extensions.DumpGraph('main/loss'))
-- Take a snapshot for each specified epoch
local frequency = args.frequency == -1 and args.epoch or math.max(1, args.frequency)
trainer:extend(extensions.snapshot({ n_retains = 1, autoload = args.autoload }), { trigger = { frequency, 'epoch' } })
-- Write a log of evaluation statistics for each epoch
trainer:extend(extensions.LogReport())
-- Save two plot images to the result dir
if not args.noplot then
  trainer:extend(extensions.PlotReport({ 'main/loss', 'validation/main/loss' }, { x_key = 'epoch', filename = 'loss.png' }))
  trainer:extend(extensions.PlotReport({ 'main/accuracy', 'validation/main/accuracy' },
    { x_key = 'epoch', filename = 'accuracy.png' }))
end
-- Print selected entries of the log to stdout
trainer:extend(extensions.PrintReport({ 'epoch', 'main/loss', 'validation/main/loss', 'main/accuracy',
  'validation/main/accuracy', 'elapsed_time' }))
-- Print a progress bar to stdout
trainer:extend(extensions.ProgressBar({ update_interval = args.update_interval }))

if args.resume ~= '' then
  -- Resume from a snapshot
  serializers.load_npz(args.resume, trainer)
end

trainer:run()

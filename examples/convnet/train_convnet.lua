-- examples/convnet/train_convnet.lua: trains one of the convnets of
-- Chainer's convnet guide (models.lua beside this file) on MNIST,
-- CIFAR-10 or CIFAR-100 through the Trainer.
--
--   chainlua examples/convnet/train_convnet.lua [--arch lenet5|vgg16|resnet50|...]
--       [--dataset mnist|cifar10|cifar100] [--epoch 10] [--batchsize 100]
--       [--device -1] [--out result] [--resume result/snapshot_iter_N]
--
-- The trained predictor is saved as <out>/model.npz with <out>/model.json
-- ({arch, dataset, n_class, in_channels}) for predict.lua.  Datasets come
-- from $CHAINER_DATASET_ROOT (see docs/datasets.md).
local chainer = require 'chainer'
local L = require 'chainer.links'
local datasets = require 'chainer.datasets'
local iterators = require 'chainer.iterators'
local optimizers = require 'chainer.optimizers'
local optimizer_hooks = require 'chainer.optimizer_hooks'
local serializers = require 'chainer.serializers'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'
local json = require 'chainer.utils.json'

local here = (arg and arg[0] or ''):match('^(.*)/[^/]*$') or '.'
local models = dofile(here .. '/models.lua')

local ap = require('chainer.utils.argparse')('Chainer example: convnets (LeNet5, VGG16, ResNet) on MNIST/CIFAR')
ap.prog = 'chainlua examples/convnet/train_convnet.lua'
ap:option('--arch', '-a', { default = 'lenet5', help = 'Architecture: ' .. table.concat(models.archs, ', ') })
ap:option('--dataset', { default = 'mnist', help = 'Dataset: mnist, cifar10 or cifar100' })
ap:option('--batchsize', '-b', { type = 'number', default = 100, help = 'Number of images in each mini-batch' })
ap:option('--epoch', '-e', { type = 'number', default = 10, help = 'Number of sweeps over the dataset to train' })
ap:option('--optimizer', { default = '', help = "adam or momentum (default: adam for mnist, momentum for cifar)" })
ap:option('--learnrate', '-l', { type = 'number', help = 'Learning rate (Adam alpha 1e-3 / MomentumSGD lr 0.05)' })
ap:option('--weight-decay', { type = 'number', help = 'WeightDecay rate (default 0 for mnist, 5e-4 for cifar)' })
ap:option('--frequency', '-f', { type = 'number', default = -1, help = 'Frequency of taking a snapshot (epochs; -1: at the end)' })
ap:option('--device', '-d', { default = '-1', help = "Device specifier: -1 or 'cpu' for CPU, N or 'cuda:N' for a GPU",
  aliases = { '--gpu', '-g' } })
ap:option('--out', '-o', { default = 'result', help = 'Directory to output the result' })
ap:option('--resume', '-r', { default = '', help = 'Resume the training from snapshot' })
ap:option('--seed', { type = 'number', default = 0, help = 'Random seed (initial weights and shuffling)' })
ap:option('--threads', { type = 'number', help = 'CPU threads for the math kernels' })
ap:option('--train-size', { type = 'number', default = 0, help = 'Use only the first N training images (0: all)' })
ap:option('--test-size', { type = 'number', default = 0, help = 'Use only the first N test images (0: all)' })
ap:option('--log-interval', { type = 'number', default = 0, help = 'LogReport interval in iterations (0: every epoch)' })
ap:option('--update-interval', { type = 'number', default = 100, help = 'ProgressBar refresh interval (iterations)' })
ap:flag('--noplot', { help = 'Disable PlotReport extension' })
ap:flag('--quiet', { help = 'No progress bar' })
local args = ap:parse(arg)

chainer.tensor.random.seed(args.seed)
if args.threads then chainer.set_num_threads(args.threads) end
local device = tonumber(args.device) or args.device
local on_gpu = device ~= -1 and device ~= 'cpu' and device ~= '@numpy'

print('Device: ' .. tostring(args.device))
print('# Architecture: ' .. args.arch)
print('# Dataset: ' .. args.dataset)
print('# Minibatch-size: ' .. args.batchsize)
print('# epoch: ' .. args.epoch)
print('')

-- Data: (C, H, W) float32 images in [0, 1] with int32 labels.
local train, test, n_class, in_channels
if args.dataset == 'mnist' then
  train, test = datasets.get_mnist({ ndim = 3 })
  n_class, in_channels = 10, 1
elseif args.dataset == 'cifar10' then
  train, test = datasets.get_cifar10()
  n_class, in_channels = 10, 3
elseif args.dataset == 'cifar100' then
  train, test = datasets.get_cifar100()
  n_class, in_channels = 100, 3
else
  error("train_convnet: --dataset must be mnist, cifar10 or cifar100 (got '" .. args.dataset .. "')", 0)
end
if args.train_size > 0 and args.train_size < train:len() then
  train = datasets.SubDataset(train, 0, args.train_size)
end
if args.test_size > 0 and args.test_size < test:len() then
  test = datasets.SubDataset(test, 0, args.test_size)
end
print(string.format('# train: %d, test: %d, classes: %d', train:len(), test:len(), n_class))

local predictor = models.build(args.arch, n_class)
local model = L.Classifier(predictor)
if on_gpu then model:to_device(device) end

-- MNIST: Adam (alpha 1e-3), as Chainer's MNIST example; CIFAR: MomentumSGD
-- (lr 0.05, halved every 25 epochs) with WeightDecay 5e-4, as Chainer's
-- CIFAR example.
local opt_name = args.optimizer ~= '' and args.optimizer or (args.dataset == 'mnist' and 'adam' or 'momentum')
local optimizer
if opt_name == 'adam' then
  optimizer = optimizers.Adam({ alpha = args.learnrate or 1e-3 })
elseif opt_name == 'momentum' then
  optimizer = optimizers.MomentumSGD({ lr = args.learnrate or 0.05 })
else
  error("train_convnet: --optimizer must be adam or momentum (got '" .. opt_name .. "')", 0)
end
optimizer:setup(model)
local wd = args.weight_decay or (args.dataset == 'mnist' and 0 or 5e-4)
if wd > 0 then optimizer:add_hook(optimizer_hooks.WeightDecay(wd)) end

local train_iter = iterators.SerialIterator(train, args.batchsize)
local test_iter = iterators.SerialIterator(test, args.batchsize, { loop = false, shuffle = false })

local updater = training.StandardUpdater(train_iter, optimizer, { device = device })
local trainer = training.Trainer(updater, { args.epoch, 'epoch' }, { out = args.out })

trainer:extend(extensions.Evaluator(test_iter, model, { device = device }))
if opt_name == 'momentum' then
  trainer:extend(extensions.ExponentialShift('lr', 0.5), { trigger = { 25, 'epoch' } })
end
local frequency = args.frequency == -1 and args.epoch or math.max(1, args.frequency)
trainer:extend(extensions.snapshot({ n_retains = 1 }), { trigger = { frequency, 'epoch' } })
local log_trigger = args.log_interval > 0 and { args.log_interval, 'iteration' } or { 1, 'epoch' }
trainer:extend(extensions.LogReport({ trigger = log_trigger }))
if not args.noplot then
  trainer:extend(extensions.PlotReport({ 'main/loss', 'validation/main/loss' }, { x_key = 'epoch', filename = 'loss.png' }))
  trainer:extend(extensions.PlotReport({ 'main/accuracy', 'validation/main/accuracy' },
    { x_key = 'epoch', filename = 'accuracy.png' }))
end
trainer:extend(extensions.PrintReport({ 'epoch', 'iteration', 'main/loss', 'validation/main/loss', 'main/accuracy',
  'validation/main/accuracy', 'elapsed_time' }))
if not args.quiet then
  trainer:extend(extensions.ProgressBar({ update_interval = args.update_interval }))
end

if args.resume ~= '' then
  serializers.load_npz(args.resume, trainer)
end

trainer:run()

-- The predictor alone, for predict.lua.
if on_gpu then predictor:to_device(-1) end
serializers.save_npz(args.out .. '/model.npz', predictor)
local f = assert(io.open(args.out .. '/model.json', 'w'))
f:write(json.encode({ arch = args.arch, dataset = args.dataset, n_class = n_class, in_channels = in_channels }), '\n')
f:close()
print('saved ' .. args.out .. '/model.npz')

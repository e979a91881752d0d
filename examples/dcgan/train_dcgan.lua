-- examples/dcgan/train_dcgan.lua: Chainer's DCGAN example -- a generator
-- (Linear + Deconvolution2D + BatchNormalization) and a discriminator
-- (Convolution2D + BatchNormalization + leaky_relu) trained against each
-- other by DCGANUpdater, with Adam (alpha 2e-4, beta1 0.5) and WeightDecay
-- on both, on CIFAR-10 or MNIST (padded to 32x32).
--
--   chainlua examples/dcgan/train_dcgan.lua [--dataset mnist|cifar10] [--ch 512]
--       [--epoch 1000] [--batchsize 50] [--device -1] [--out result]
--       [--snapshot_interval 1000] [--display_interval 100] [--resume FILE]
--
-- Writes <out>/snapshot_iter_N.npz, gen_iter_N.npz, dis_iter_N.npz and
-- <out>/preview/imageNNNNNNNN.png (10x10 generated samples, fixed z) every
-- snapshot_interval iterations, and <out>/log.
local chainer = require 'chainer'
local T = chainer.tensor
local datasets = require 'chainer.datasets'
local iterators = require 'chainer.iterators'
local optimizers = require 'chainer.optimizers'
local optimizer_hooks = require 'chainer.optimizer_hooks'
local serializers = require 'chainer.serializers'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'

local here = (arg and arg[0] or ''):match('^(.*)/[^/]*$') or '.'
local net = dofile(here .. '/net.lua')
local DCGANUpdater = dofile(here .. '/updater.lua')
local visualize = dofile(here .. '/visualize.lua')

local ap = require('chainer.utils.argparse')('Chainer example: DCGAN')
ap.prog = 'chainlua examples/dcgan/train_dcgan.lua'
ap:option('--batchsize', '-b', { type = 'number', default = 50, help = 'Number of images in each mini-batch' })
ap:option('--epoch', '-e', { type = 'number', default = 1000, help = 'Number of sweeps over the dataset to train' })
ap:option('--iteration', { type = 'number', default = 0, help = 'Stop after this many iterations instead (0: use --epoch)' })
ap:option('--device', '-d', { default = '-1', help = "Device specifier: -1 or 'cpu' for CPU, N or 'cuda:N' for a GPU",
  aliases = { '--gpu', '-g' } })
ap:option('--dataset', { default = 'mnist', help = 'mnist (28x28 gray, padded to 32x32) or cifar10 (32x32 RGB)' })
ap:option('--dataset-size', { type = 'number', default = 0, help = 'Use only the first N training images (0: all)' })
ap:option('--out', '-o', { default = 'result', help = 'Directory to output the result' })
ap:option('--resume', '-r', { default = '', help = 'Resume the training from snapshot' })
ap:option('--n_hidden', '-n', { type = 'number', default = 100, help = 'Number of hidden units (z)' })
ap:option('--ch', { type = 'number', default = 512, help = 'Channels of the widest layer of both nets (seed: 512)' })
ap:option('--dis-ch', { type = 'number', default = 0, help = 'Channels of the discriminator if not --ch (0: --ch)' })
ap:option('--seed', { type = 'number', default = 0, help = 'Random seed (initial weights, shuffling, noise; also the z of the preview images)' })
ap:option('--snapshot_interval', { type = 'number', default = 1000, help = 'Interval of snapshot (iterations)' })
ap:option('--display_interval', { type = 'number', default = 100, help = 'Interval of displaying log to console (iterations)' })
ap:option('--weight-decay', { type = 'number', default = 1e-5, help = 'WeightDecay rate of both optimizers' })
ap:option('--threads', { type = 'number', help = 'CPU threads for the math kernels' })
ap:flag('--quiet', { help = 'No progress bar' })
local args = ap:parse(arg)

if args.threads then chainer.set_num_threads(args.threads) end
if args.dis_ch == 0 then args.dis_ch = args.ch end
for _, k in ipairs({ 'ch', 'dis_ch' }) do
  if args[k] % 8 ~= 0 or args[k] <= 0 then
    error(string.format('train_dcgan: --%s must be a positive multiple of 8 (got %s)', k:gsub('_', '-'), args[k]), 0)
  end
end
local device = tonumber(args.device) or args.device
local on_gpu = device ~= -1 and device ~= 'cpu' and device ~= '@numpy'

print('Device: ' .. tostring(args.device))
print('# Minibatch-size: ' .. args.batchsize)
print('# n_hidden: ' .. args.n_hidden)
print('# epoch: ' .. args.epoch)
print('# dataset: ' .. args.dataset .. ', ch: ' .. args.ch .. (args.dis_ch ~= args.ch and ', dis-ch: ' .. args.dis_ch or ''))
print('')

-- Data: a (N, C, 32, 32) tensor of pixel values in [0, 255] (the updater
-- divides by 255).
local train, channels
if args.dataset == 'cifar10' then
  train = datasets.get_cifar10({ withlabel = false, scale = 255 })
  channels = 3
elseif args.dataset == 'mnist' then
  local x = datasets.get_mnist({ withlabel = false, ndim = 3, scale = 255 })
  train = x:pad({ { 0, 0 }, { 0, 0 }, { 2, 2 }, { 2, 2 } })   -- 28x28 -> 32x32, digit centred
  channels = 1
else
  error("train_dcgan: --dataset must be mnist or cifar10 (got '" .. args.dataset .. "')", 0)
end
if args.dataset_size > 0 and args.dataset_size < train.shape[1] then
  train = train:slice({ 0, args.dataset_size }):contiguous()
end
print('# images: ' .. train.shape[1])

T.random.seed(args.seed)
local gen = net.Generator(args.n_hidden, { ch = args.ch, out_ch = channels })
local dis = net.Discriminator({ ch = args.dis_ch, in_ch = channels })
if on_gpu then
  gen:to_device(device)
  dis:to_device(device)
end

local function make_optimizer(model, alpha, beta1)
  local optimizer = optimizers.Adam({ alpha = alpha or 2e-4, beta1 = beta1 or 0.5 })
  optimizer:setup(model)
  optimizer:add_hook(optimizer_hooks.WeightDecay(args.weight_decay), 'hook_dec')
  return optimizer
end
local opt_gen = make_optimizer(gen)
local opt_dis = make_optimizer(dis)

local train_iter = iterators.SerialIterator(train, args.batchsize)

local updater = DCGANUpdater({
  models = { gen, dis },
  iterator = train_iter,
  optimizer = { gen = opt_gen, dis = opt_dis },
  device = device,
})
local stop = args.iteration > 0 and { args.iteration, 'iteration' } or { args.epoch, 'epoch' }
local trainer = training.Trainer(updater, stop, { out = args.out })

local snapshot_interval = { args.snapshot_interval, 'iteration' }
local display_interval = { args.display_interval, 'iteration' }
trainer:extend(extensions.snapshot({ filename = 'snapshot_iter_{.updater.iteration}.npz' }),
  { trigger = snapshot_interval })
trainer:extend(extensions.snapshot_object(gen, 'gen_iter_{.updater.iteration}.npz'), { trigger = snapshot_interval })
trainer:extend(extensions.snapshot_object(dis, 'dis_iter_{.updater.iteration}.npz'), { trigger = snapshot_interval })
trainer:extend(extensions.LogReport({ trigger = display_interval }))
trainer:extend(extensions.PrintReport({ 'epoch', 'iteration', 'gen/loss', 'dis/loss', 'elapsed_time' }),
  { trigger = display_interval })
if not args.quiet then trainer:extend(extensions.ProgressBar({ update_interval = 10 })) end
trainer:extend(visualize.out_generated_image(gen, dis, 10, 10, args.seed, args.out), { trigger = snapshot_interval })

if args.resume ~= '' then
  serializers.load_npz(args.resume, trainer)
end

trainer:run()

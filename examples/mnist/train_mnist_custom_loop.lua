-- examples/mnist/train_mnist_custom_loop.lua: the MNIST tutorial's manual
-- training loop (no Trainer): iterator, forward, backward, optimizer:update,
-- an evaluation pass per epoch under no_backprop_mode and train = false,
-- then saving the model, loading it into a fresh network and classifying
-- the first test image.
--
--   chainlua examples/mnist/train_mnist_custom_loop.lua [--epoch 10] [--batchsize 128]
local chainer = require 'chainer'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local datasets = require 'chainer.datasets'
local iterators = require 'chainer.iterators'
local optimizers = require 'chainer.optimizers'
local serializers = require 'chainer.serializers'
local concat_examples = require('chainer.dataset').concat_examples

local ap = require('chainer.utils.argparse')('Chainer example: MNIST (custom training loop)')
ap.prog = 'chainlua examples/mnist/train_mnist_custom_loop.lua'
ap:option('--batchsize', '-b', { type = 'number', default = 128, help = 'Number of images in each mini-batch' })
ap:option('--epoch', '-e', { type = 'number', default = 10, help = 'Number of sweeps over the dataset to train' })
ap:option('--device', '-d', { default = '-1', help = 'Device specifier (-1: CPU)', aliases = { '--gpu', '-g' } })
ap:option('--out', '-o', { default = 'my_mnist.model', help = 'Where to save the trained model' })
ap:option('--unit', '-u', { type = 'number', default = 100, help = 'Number of units' })
ap:option('--seed', { type = 'number', help = 'Random seed' })
ap:option('--threads', { type = 'number', help = 'CPU threads for the math kernels' })
local args = ap:parse(arg)
if args.seed then chainer.tensor.random.seed(args.seed) end
if args.threads then chainer.set_num_threads(args.threads) end
local device = tonumber(args.device) or args.device

local train, test = datasets.get_mnist({ withlabel = true, ndim = 1 })
local train_iter = iterators.SerialIterator(train, args.batchsize)
local test_iter = iterators.SerialIterator(test, args.batchsize, { loop = false, shuffle = false })

local MyNetwork = chainer.Chain:extend('MyNetwork')
function MyNetwork:init(n_mid_units, n_out)
  n_mid_units, n_out = n_mid_units or 100, n_out or 10
  self.l1 = L.Linear(nil, n_mid_units)
  self.l2 = L.Linear(n_mid_units, n_mid_units)
  self.l3 = L.Linear(n_mid_units, n_out)
end
function MyNetwork:forward(x)
  local h = F.relu(self.l1(x))
  h = F.relu(self.l2(h))
  return self.l3(h)
end

local model = MyNetwork(args.unit)
if device ~= -1 and device ~= 'cpu' then model:to_device(device) end
local optimizer = optimizers.MomentumSGD({ lr = 0.01, momentum = 0.9 }):setup(model)

while train_iter.epoch < args.epoch do
  -- one minibatch
  local train_batch = train_iter:next()
  local xt = concat_examples(train_batch, device)
  local prediction_train = model(xt[1])
  local loss = F.softmax_cross_entropy(prediction_train, xt[2])
  model:cleargrads()
  loss:backward()
  optimizer:update()

  if train_iter.is_new_epoch then
    io.write(string.format('epoch:%02d train_loss:%.04f ', train_iter.epoch, loss.array:item()))
    local test_losses, test_accuracies = {}, {}
    chainer.using_config('train', false, function()
      chainer.no_backprop_mode(function()
        for test_batch in test_iter do
          local xv = concat_examples(test_batch, device)
          local prediction_test = model(xv[1])
          test_losses[#test_losses + 1] = F.softmax_cross_entropy(prediction_test, xv[2]).array:item()
          test_accuracies[#test_accuracies + 1] = F.accuracy(prediction_test, xv[2]).array:item()
        end
      end)
    end)
    test_iter:reset()
    local function mean(t) local s = 0 for _, v in ipairs(t) do s = s + v end return s / #t end
    io.write(string.format('val_loss:%.04f val_accuracy:%.04f\n', mean(test_losses), mean(test_accuracies)))
  end
end

serializers.save_npz(args.out, model)

-- a fresh network with the saved parameters classifies the first test image
local model2 = MyNetwork(args.unit)
serializers.load_npz(args.out, model2)
local ex = test[1]
local x, t = ex[1], ex[2]
print('label: ' .. t:item())
io.write('(' .. x.shape[1] .. ',) -> ')
x = x:reshape({ 1, x.shape[1] })
print('(' .. x.shape[1] .. ', ' .. x.shape[2] .. ')')
local y = chainer.using_config('train', false, function() return model2(x).array end)
local pred_label = y:argmax({ axis = 1 })
print('predicted label: ' .. pred_label:reshape(-1):tolist()[1])

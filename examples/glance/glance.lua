-- examples/glance/glance.lua: "Chainer at a Glance" -- is a mushroom edible
-- or poisonous?  An MLP on the UCI mushroom data (mushrooms.csv, beside
-- this file): each of the 22 categorical columns one-hot encoded, a random
-- 80/20 train/validation split, 50 epochs of SGD, then one prediction.
--
--   chainlua examples/glance/glance.lua [--epoch 50] [--out result]
--
-- Writes result/log, loss.png/.svg, accuracy.png/.svg, cg.dot and
-- snapshots at epochs 20 and 40 into the output directory.
local chainer = require 'chainer'
local T = chainer.tensor
local F = require 'chainer.functions'
local L = require 'chainer.links'
local datasets = require 'chainer.datasets'
local iterators = require 'chainer.iterators'
local optimizers = require 'chainer.optimizers'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'

local here = (arg and arg[0] or ''):match('^(.*)/[^/]*$') or '.'
local ap = require('chainer.utils.argparse')('Chainer example: glance (mushroom classification)')
ap.prog = 'chainlua examples/glance/glance.lua'
ap:option('--epoch', '-e', { type = 'number', default = 50, help = 'Number of sweeps over the dataset to train' })
ap:option('--batchsize', '-b', { type = 'number', default = 100, help = 'Number of examples in each mini-batch' })
ap:option('--out', '-o', { default = 'result', help = 'Directory to output the result' })
ap:option('--data', { default = here .. '/mushrooms.csv', help = 'The mushroom CSV file' })
ap:option('--seed', { type = 'number', default = 0, help = 'Random seed (split, initial weights, shuffling)' })
ap:option('--threads', { type = 'number', default = 1, help = 'CPU threads for the math kernels' })
ap:flag('--noplot', { help = 'Disable PlotReport extension' })
ap:flag('--quiet', { help = 'No progress bar (the report table is still printed)' })
local args = ap:parse(arg)

T.random.seed(args.seed)
-- a model this small runs fastest on one thread (no OpenMP hand-offs per tiny matmul)
chainer.set_num_threads(args.threads)

-- Read the CSV: a header, then rows of single-letter categories.
local rows = {}
local f = io.open(args.data, 'r')
if not f then error('glance: cannot open ' .. args.data, 0) end
local header = f:read('*l')
for line in f:lines() do
  if line ~= '' then
    local r = {}
    for v in line:gmatch('[^,]+') do r[#r + 1] = v end
    rows[#rows + 1] = r
  end
end
f:close()
local ncol = #rows[1]

-- Each feature column becomes a one-hot block over its sorted categories;
-- the class column (0) gives the label: e -> 0 (edible), p -> 1 (poisonous).
local cats, offsets, width = {}, {}, 0
for c = 2, ncol do
  local seen, list = {}, {}
  for _, r in ipairs(rows) do
    if not seen[r[c]] then seen[r[c]] = true list[#list + 1] = r[c] end
  end
  table.sort(list)
  local index = {}
  for i, v in ipairs(list) do index[v] = i - 1 end
  cats[c], offsets[c] = index, width
  width = width + #list
end
local N = #rows
local xs, ys = {}, {}
for i, r in ipairs(rows) do
  local base = (i - 1) * width
  for j = 1, width do xs[base + j] = 0 end
  for c = 2, ncol do xs[base + offsets[c] + cats[c][r[c]] + 1] = 1 end
  ys[i] = r[1] == 'p' and 1 or 0
end
local X = T.array(xs, 'float32'):reshape({ N, width })
local Y = T.array(ys, 'int32'):reshape({ N, 1 })
print(string.format('%d examples, %d categorical columns -> %d one-hot features', N, ncol - 1, width))

local train, test = datasets.split_dataset_random(datasets.TupleDataset(X, Y), math.floor(N * 0.8), args.seed)
local train_iter = iterators.SerialIterator(train, args.batchsize)
local test_iter = iterators.SerialIterator(test, args.batchsize, { loop = false, shuffle = false })

-- The network: two hidden layers of 44 units, one output logit.
local MLP = chainer.Chain:extend('MLP')
function MLP:init(n_units, n_out)
  self.l1 = L.Linear(nil, n_units)
  self.l2 = L.Linear(nil, n_units)
  self.l3 = L.Linear(nil, n_out)
end
function MLP:forward(x)
  local h1 = F.relu(self.l1(x))
  local h2 = F.relu(self.l2(h1))
  return self.l3(h2)
end

local model = L.Classifier(MLP(44, 1), F.sigmoid_cross_entropy, F.binary_accuracy)
local optimizer = optimizers.SGD():setup(model)
local updater = training.StandardUpdater(train_iter, optimizer, { device = -1 })
local trainer = training.Trainer(updater, { args.epoch, 'epoch' }, { out = args.out })

trainer:extend(extensions.Evaluator(test_iter, model, { device = -1 }))
trainer:extend(extensions.DumpGraph('main/loss'))
trainer:extend(extensions.snapshot(), { trigger = { 20, 'epoch' } })
trainer:extend(extensions.LogReport())
if not args.noplot then
  trainer:extend(extensions.PlotReport({ 'main/loss', 'validation/main/loss' }, { x_key = 'epoch', filename = 'loss.png' }))
  trainer:extend(extensions.PlotReport({ 'main/accuracy', 'validation/main/accuracy' },
    { x_key = 'epoch', filename = 'accuracy.png' }))
end
trainer:extend(extensions.PrintReport({ 'epoch', 'main/loss', 'validation/main/loss', 'main/accuracy',
  'validation/main/accuracy', 'elapsed_time' }))
if not args.quiet then
  -- 65 iterations an epoch: a redraw every 20 keeps the bar moving
  trainer:extend(extensions.ProgressBar({ update_interval = 20 }))
end
trainer:run()

-- One prediction on a random validation example.
local i = math.random(1, test:len())
local ex = test[i]
local x, t = ex[1], ex[2]
local logit = chainer.using_config('train', false, function()
  return model.predictor(x:reshape({ 1, width })).array:reshape(-1):tolist()[1]
end)
local actual = t:reshape(-1):tolist()[1] == 1 and 'Poisonous' or 'Edible'
print(string.format('Predicted %s, Actual %s', logit >= 0 and 'Poisonous' or 'Edible', actual))

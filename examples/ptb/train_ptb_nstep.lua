-- examples/ptb/train_ptb_nstep.lua: the PTB language model with L.NStepLSTM
-- (see ptb_nstep_model.lua): each update feeds a whole (batch, bproplen)
-- window through the two LSTM layers in one call.  Same options, data,
-- optimizer (SGD + GradientClipping) and reports as train_ptb.lua.
--
--   chainlua examples/ptb/train_ptb_nstep.lua --test
--   chainlua examples/ptb/train_ptb_nstep.lua --unit 200 --dropout 0 --epoch 13
local chainer = require 'chainer'
local datasets = require 'chainer.datasets'
local optimizers = require 'chainer.optimizers'
local optimizer_hooks = require 'chainer.optimizer_hooks'
local serializers = require 'chainer.serializers'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'

local here = (arg and arg[0] or ''):match('^(.*)/[^/]*$') or '.'
local ptb = dofile(here .. '/ptb_common.lua')
local nstep = dofile(here .. '/ptb_nstep_model.lua')

local ap = require('chainer.utils.argparse')('Chainer example: RNNLM with NStepLSTM on the Penn Treebank')
ap.prog = 'chainlua examples/ptb/train_ptb_nstep.lua'
ap:option('--batchsize', '-b', { type = 'number', default = 20, help = 'Number of examples in each mini-batch' })
ap:option('--bproplen', '-l', { type = 'number', default = 35, help = 'Number of words in each mini-batch ' ..
  '(= length of truncated BPTT)' })
ap:option('--epoch', '-e', { type = 'number', default = 39, help = 'Number of sweeps over the dataset to train' })
ap:option('--device', '-d', { default = '-1', help = "Device specifier: -1 or 'cpu' for CPU, N or 'cuda:N' for a GPU",
  aliases = { '--gpu', '-g' } })
ap:option('--gradclip', '-c', { type = 'number', default = 5, help = 'Gradient norm threshold to clip' })
ap:option('--out', '-o', { default = 'result', help = 'Directory to output the result' })
ap:option('--resume', '-r', { default = '', help = 'Resume the training from snapshot' })
ap:flag('--test', { help = 'Use tiny datasets for quick tests' })
ap:option('--unit', '-u', { type = 'number', default = 650, help = 'Number of LSTM units in each layer' })
ap:option('--model', '-m', { default = 'model.npz', help = 'Model file name to serialize (written into --out)' })
ap:option('--dropout', { type = 'number', default = 0.5, help = 'Dropout ratio (embedding, between and after the LSTM layers)' })
ap:option('--lr', { type = 'number', default = 1.0, help = 'SGD learning rate' })
ap:option('--log-interval', { type = 'number', help = 'LogReport/PrintReport interval in iterations (default 500; 10 with --test)' })
ap:option('--train-words', { type = 'number', default = 0, help = 'Use only the first N training words (0: all)' })
ap:option('--valid-words', { type = 'number', default = 0, help = 'Use only the first N validation and test words (0: all)' })
ap:flag('--no-snapshot', { help = 'Do not write trainer snapshots every epoch' })
ap:option('--seed', { type = 'number', help = 'Random seed (initial weights and dropout)' })
ap:option('--threads', { type = 'number', help = 'CPU threads for the math kernels' })
local args = ap:parse(arg)

if args.seed then chainer.tensor.random.seed(args.seed) end
if args.threads then chainer.set_num_threads(args.threads) end
local device = ptb.device_arg(args.device)

local train, val, test = datasets.get_ptb_words()
local n_vocab = train:max():item() + 1
print('#vocab = ' .. n_vocab)
local function head(t, n) return t:slice({ 0, math.min(n, t.size) }) end
if args.test then
  train, val, test = head(train, 100), head(val, 100), head(test, 100)
end
if args.train_words > 0 then train = head(train, args.train_words) end
if args.valid_words > 0 then val, test = head(val, args.valid_words), head(test, args.valid_words) end

-- training: batchsize streams, bproplen words of each per update;
-- evaluation: one stream read bproplen words at a time
local L_ = args.bproplen
local train_iter = nstep.WindowedSequentialIterator(ptb.ParallelSequentialIterator(train, args.batchsize), L_)
local val_iter = nstep.WindowedSequentialIterator(ptb.ParallelSequentialIterator(val, 1, { loop = false }), L_)
local test_iter = nstep.WindowedSequentialIterator(ptb.ParallelSequentialIterator(test, 1, { loop = false }), L_)

local rnn = nstep.RNNForLMNStep(n_vocab, args.unit, args.dropout)
local model = nstep.LMLoss(rnn)
if device ~= -1 and device ~= 'cpu' then model:to_device(device) end

local optimizer = optimizers.SGD({ lr = args.lr }):setup(model)
optimizer:add_hook(optimizer_hooks.GradientClipping(args.gradclip))

-- One update = one window.  The loss is the mean over the window's
-- positions; its gradient is scaled by bproplen so the step matches
-- train_ptb.lua, which sums bproplen per-step means.
local NStepUpdater = training.StandardUpdater:extend('NStepBPTTUpdater')
function NStepUpdater:update_core()
  local it, opt = self:get_iterator('main'), self:get_optimizer('main')
  local xt = self.converter(it:next(), self.device)
  local loss = opt.target(xt[1], xt[2])
  opt.target:cleargrads()
  local scaled = loss * xt[1].shape[2]
  scaled:backward()
  scaled:unchain_backward()
  opt:update()
end
local updater = NStepUpdater(train_iter, optimizer, { device = device, converter = nstep.convert })
local trainer = training.Trainer(updater, { args.epoch, 'epoch' }, { out = args.out })

local eval_model = model:copy()
local eval_rnn = eval_model.predictor
trainer:extend(extensions.Evaluator(val_iter, eval_model, { device = device, converter = nstep.convert,
  eval_hook = function() eval_rnn:reset_state() end }))
-- an update here is bproplen iterations of train_ptb.lua
local interval = args.log_interval or (args.test and 10 or 100)
trainer:extend(extensions.LogReport({ postprocess = ptb.compute_perplexity, trigger = { interval, 'iteration' } }))
trainer:extend(extensions.PrintReport({ 'epoch', 'iteration', 'perplexity', 'val_perplexity', 'elapsed_time' }),
  { trigger = { interval, 'iteration' } })
trainer:extend(extensions.ProgressBar({ update_interval = args.test and 1 or 10 }))
if not args.no_snapshot then
  trainer:extend(extensions.snapshot())
  trainer:extend(extensions.snapshot_object(model, 'model_iter_{.updater.iteration}'))
end
if args.resume ~= '' then serializers.load_npz(args.resume, trainer) end

trainer:run()

print('test')
eval_rnn:reset_state()
local evaluator = extensions.Evaluator(test_iter, eval_model, { device = device, converter = nstep.convert })
local result = evaluator()
print(string.format('test perplexity: %.10g', math.exp(result['main/loss'])))

os.execute('mkdir -p ' .. args.out)
serializers.save_npz(args.out .. '/' .. args.model, model)

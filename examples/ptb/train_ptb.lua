-- examples/ptb/train_ptb.lua: Chainer's Penn Treebank language model -- an
-- RNNLM (EmbedID, two stacked LSTMs with dropout, Linear) trained by
-- truncated backpropagation through time, evaluated by perplexity.
--
--   chainlua examples/ptb/train_ptb.lua --test                      (100 words, a smoke run)
--   chainlua examples/ptb/train_ptb.lua --unit 200 --dropout 0 --epoch 13   (the "small" config)
--   chainlua examples/ptb/train_ptb.lua                             (Chainer's defaults: 650 units)
--
-- The words come from $CHAINER_DATASET_ROOT/ptb (see docs/datasets.md).
local chainer = require 'chainer'
local L = require 'chainer.links'
local datasets = require 'chainer.datasets'
local optimizers = require 'chainer.optimizers'
local optimizer_hooks = require 'chainer.optimizer_hooks'
local training = require 'chainer.training'

local here = (arg and arg[0] or ''):match('^(.*)/[^/]*$') or '.'
local ptb = dofile(here .. '/ptb_common.lua')

local ap = ptb.parser('Chainer example: RNNLM on the Penn Treebank', 'chainlua examples/ptb/train_ptb.lua',
  'Dropout ratio before each LSTM and the output layer')
local args = ap:parse(arg)
local device = ptb.setup(args)

-- Load the Penn Tree Bank long word sequence dataset
local train, val, test, n_vocab = ptb.load_words(args)

local train_iter = ptb.ParallelSequentialIterator(train, args.batchsize)
local val_iter = ptb.ParallelSequentialIterator(val, 1, { loop = false })
local test_iter = ptb.ParallelSequentialIterator(test, 1, { loop = false })

-- Prepare an RNNLM model
local rnn = ptb.RNNForLM(n_vocab, args.unit, args.dropout)
local model = L.Classifier(rnn)
model.compute_accuracy = false   -- we only want the perplexity
if device ~= -1 and device ~= 'cpu' then model:to_device(device) end

-- Set up an optimizer
local optimizer = optimizers.SGD({ lr = args.lr }):setup(model)
optimizer:add_hook(optimizer_hooks.GradientClipping(args.gradclip))

-- Set up a trainer
local updater = ptb.BPTTUpdater(train_iter, optimizer, args.bproplen, device)
local trainer = training.Trainer(updater, { args.epoch, 'epoch' }, { out = args.out })
ptb.add_lr_schedule(trainer, optimizer, args)

-- The evaluator works on a copy that shares the parameters but has its own
-- LSTM state, reset before each pass over the validation stream.
local eval_model = ptb.add_evaluator(trainer, val_iter, model, device, ptb.convert)

local interval = args.log_interval or (args.test and 10 or 500)
ptb.add_reports(trainer, args, model, interval)

trainer:run()

-- Evaluate the final model and serialize it
ptb.test_and_save(args, model, eval_model, test_iter, device, ptb.convert)

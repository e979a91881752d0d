-- examples/ptb/train_ptb_nstep.lua: the PTB language model with L.NStepLSTM
-- (see ptb_nstep_model.lua): each update feeds a whole (batch, bproplen)
-- window through the two LSTM layers in one call.  Same options, data,
-- optimizer (SGD + GradientClipping) and reports as train_ptb.lua.
--
--   chainlua examples/ptb/train_ptb_nstep.lua --test
--   chainlua examples/ptb/train_ptb_nstep.lua --unit 200 --dropout 0 --epoch 13
local chainer = require 'chainer'
local optimizers = require 'chainer.optimizers'
local optimizer_hooks = require 'chainer.optimizer_hooks'
local training = require 'chainer.training'

local here = (arg and arg[0] or ''):match('^(.*)/[^/]*$') or '.'
local ptb = dofile(here .. '/ptb_common.lua')
local nstep = dofile(here .. '/ptb_nstep_model.lua')

local ap = ptb.parser('Chainer example: RNNLM with NStepLSTM on the Penn Treebank',
  'chainlua examples/ptb/train_ptb_nstep.lua', 'Dropout ratio (embedding, between and after the LSTM layers)')
local args = ap:parse(arg)
local device = ptb.setup(args)

local train, val, test, n_vocab = ptb.load_words(args)

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
ptb.add_lr_schedule(trainer, optimizer, args)

local eval_model = ptb.add_evaluator(trainer, val_iter, model, device, nstep.convert)
-- an update here is bproplen iterations of train_ptb.lua
local interval = args.log_interval or (args.test and 10 or 100)
ptb.add_reports(trainer, args, model, interval)

trainer:run()

ptb.test_and_save(args, model, eval_model, test_iter, device, nstep.convert)

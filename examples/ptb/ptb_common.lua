-- examples/ptb/ptb_common.lua: the pieces train_ptb.lua, train_ptb_nstep.lua
-- and gentxt.lua share: the language model RNNForLM, the parallel
-- sequential iterator, the BPTT updater and the batch converter; and the
-- two training scripts' options, data loading, reports and final test.
--
-- (Chainer keeps them inside train_ptb.py; gentxt.py imports them from there.)
local chainer = require 'chainer'
local datasets = require 'chainer.datasets'
local serializers = require 'chainer.serializers'
local extensions = require 'chainer.training.extensions'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local T = require 'chainer.tensor'
local training = require 'chainer.training'
local Iterator = require 'chainer.dataset.iterator'
local ffi = require 'ffi'

local M = {}

---------------------------------------------------------------------------
-- RNNForLM: EmbedID -> LSTM -> LSTM -> Linear, dropout before each of the
-- last three.  Every parameter starts uniform in [-0.1, 0.1] (Chainer's
-- example overrides the links' own initialisers).
---------------------------------------------------------------------------
local RNNForLM = chainer.Chain:extend('RNNForLM')
function RNNForLM:init(n_vocab, n_units, dropout)
  self.embed = L.EmbedID(n_vocab, n_units)
  self.l1 = L.LSTM(n_units, n_units)
  self.l2 = L.LSTM(n_units, n_units)
  self.l3 = L.Linear(n_units, n_vocab)
  self.dropout = dropout or 0.5
  for p in self:params() do p.array:uniform_(-0.1, 0.1) end
end

function RNNForLM:reset_state()
  self.l1:reset_state()
  self.l2:reset_state()
end

function RNNForLM:forward(x)
  local r = self.dropout
  local h0 = self.embed(x)
  if r == 0 then   -- the small configuration: no dropout nodes at all
    return self.l3(self.l2(self.l1(h0)))
  end
  local h1 = self.l1(F.dropout(h0, r))
  local h2 = self.l2(F.dropout(h1, r))
  return self.l3(F.dropout(h2, r))
end
M.RNNForLM = RNNForLM

---------------------------------------------------------------------------
-- ParallelSequentialIterator(dataset, batch_size, {loop = true}): the word
-- stream read at batch_size positions spread evenly over it (offsets
-- i * len / batch_size), one word per position per step.  A batch is a Lua
-- array of {current word, next word} pairs (0-based ids).
---------------------------------------------------------------------------
local PSI = Iterator:extend('ParallelSequentialIterator')
M.ParallelSequentialIterator = PSI

function PSI:init(dataset, batch_size, opts)
  local loop = true
  if type(opts) == 'table' then
    if opts.loop ~= nil then loop = opts.loop elseif opts['repeat'] ~= nil then loop = opts['repeat'] end
  elseif type(opts) == 'boolean' then
    loop = opts
  end
  if not T.is_tensor(dataset) or dataset.ndim ~= 1 then
    error('ParallelSequentialIterator: dataset must be a 1-d tensor of word ids', 3)
  end
  local data = dataset:astype('int32'):contiguous()
  self.dataset = data
  self._ptr = ffi.cast('int32_t*', data.ptr.data) + data.ptr.offset
  self.length = data.size
  self.batch_size = batch_size
  self.loop = loop
  self['repeat'] = loop
  -- where each of the batch_size streams starts
  self.offsets = {}
  for i = 0, batch_size - 1 do self.offsets[i + 1] = math.floor(i * self.length / batch_size) end
  self:reset()
end

function PSI:reset()
  self.epoch = 0
  self.iteration = 0
  self.is_new_epoch = false
  self.epoch_detail = 0
  self.previous_epoch_detail = nil
end

function PSI:_words(iteration)
  local out, n, p = {}, self.length, self._ptr
  for i = 1, self.batch_size do out[i] = p[(self.offsets[i] + iteration) % n] end
  return out
end

function PSI:next()
  local n = self.length
  -- without repeat, one pass over the stream and then nil
  if not self.loop and self.iteration * self.batch_size >= n then return nil end
  local cur = self:_words(self.iteration)
  self.previous_epoch_detail = self.epoch_detail
  self.iteration = self.iteration + 1
  local nxt = self:_words(self.iteration)
  local epoch = math.floor(self.iteration * self.batch_size / n)
  self.is_new_epoch = self.epoch < epoch
  if self.is_new_epoch then self.epoch = epoch end
  self.epoch_detail = self.iteration * self.batch_size / n
  local batch = {}
  for i = 1, self.batch_size do batch[i] = { cur[i], nxt[i] } end
  return batch
end

function PSI:serialize(serializer)
  local util = require 'chainer.training._util'
  self.iteration = util.ser_number(serializer, 'iteration', self.iteration)
  self.epoch = util.ser_number(serializer, 'epoch', self.epoch)
  local prev = util.ser_number(serializer, 'previous_epoch_detail', self.previous_epoch_detail or -1)
  self.previous_epoch_detail = (prev ~= nil and prev >= 0) and prev or nil
  self.epoch_detail = self.iteration * self.batch_size / self.length
end

---------------------------------------------------------------------------
-- convert(batch, device) -> x, t: int32 tensors of the current and the next
-- word of each stream.
---------------------------------------------------------------------------
function M.convert(batch, device)
  local n = #batch
  local x, t = T.empty({ n }, 'int32'), T.empty({ n }, 'int32')
  local px = ffi.cast('int32_t*', x.ptr.data) + x.ptr.offset
  local pt = ffi.cast('int32_t*', t.ptr.data) + t.ptr.offset
  for i = 1, n do
    px[i - 1] = batch[i][1]
    pt[i - 1] = batch[i][2]
  end
  if device ~= nil and device ~= -1 and device ~= '-1' and device ~= 'cpu' and device ~= '@numpy' then
    x, t = x:to_device(device), t:to_device(device)
  end
  return { x, t }
end

---------------------------------------------------------------------------
-- BPTTUpdater(train_iter, optimizer, bprop_len, device): one update reads
-- bprop_len batches, sums the losses, back-propagates through all of them,
-- cuts the graph behind (unchain_backward: the LSTM state carries on, its
-- history is freed) and updates once.
---------------------------------------------------------------------------
local BPTTUpdater = training.StandardUpdater:extend('BPTTUpdater')
M.BPTTUpdater = BPTTUpdater

function BPTTUpdater:init(train_iter, optimizer, bprop_len, device)
  training.StandardUpdater.init(self, train_iter, optimizer, { device = device, converter = M.convert })
  self.bprop_len = bprop_len
end

function BPTTUpdater:update_core()
  local loss = nil
  local train_iter = self:get_iterator('main')
  local optimizer = self:get_optimizer('main')
  for _ = 1, self.bprop_len do
    local batch = train_iter:next()
    local xt = self.converter(batch, self.device)
    local l = optimizer.target(xt[1], xt[2])
    loss = loss and loss + l or l
  end
  optimizer.target:cleargrads()
  loss:backward()
  loss:unchain_backward()   -- truncate the graph: the next update starts here
  optimizer:update()
end

-- LogReport postprocess: perplexities from the mean losses.
function M.compute_perplexity(result)
  result['perplexity'] = math.exp(result['main/loss'])
  if result['validation/main/loss'] ~= nil then
    result['val_perplexity'] = math.exp(result['validation/main/loss'])
  end
end

-- '-1', 'cpu', '@numpy' -> -1; '0' -> 0; other strings as given.
function M.device_arg(d)
  return tonumber(d) or d
end

---------------------------------------------------------------------------
-- The training scripts' shared parts
---------------------------------------------------------------------------
-- The command line parser: Chainer's train_ptb.py options, then chainlua's
-- (dropout_help says where that script applies dropout).
function M.parser(description, prog, dropout_help)
  local ap = require('chainer.utils.argparse')(description)
  ap.prog = prog
  ap:option('--batchsize', '-b', { type = 'number', default = 20, help = 'Number of examples in each mini-batch' })
  ap:option('--bproplen', '-l', { type = 'number', default = 35, help = 'Number of words in each mini-batch ' ..
    '(= length of truncated BPTT)' })
  ap:option('--epoch', '-e', { type = 'number', default = 39, help = 'Number of sweeps over the dataset to train' })
  ap:option('--device', '-d', { default = '-1', help = "Device specifier: -1 or 'cpu' for CPU, N or 'cuda:N' for a GPU",
    aliases = { '--gpu', '-g' } })
  ap:option('--gradclip', '-c', { type = 'number', default = 5, help = 'Gradient norm threshold to clip' })
  ap:option('--out', '-o', { default = 'result', help = 'Directory to output the result' })
  ap:option('--resume', '-r', { default = '', help = 'Resume the training from snapshot' })
  ap:flag('--resume-lenient', { help = 'With --resume: skip the keys the snapshot lacks (extensions added ' ..
    'since it was written start fresh)' })
  ap:flag('--test', { help = 'Use tiny datasets for quick tests' })
  ap:option('--unit', '-u', { type = 'number', default = 650, help = 'Number of LSTM units in each layer' })
  ap:option('--model', '-m', { default = 'model.npz', help = 'Model file name to serialize (written into --out)' })
  -- chainlua extras
  ap:option('--dropout', { type = 'number', default = 0.5, help = dropout_help })
  ap:option('--lr', { type = 'number', default = 1.0, help = 'SGD learning rate' })
  ap:option('--lr-decay', { type = 'number', default = 1.0, help = 'Multiply the learning rate by this ' ..
    'after each epoch from --decay-after on (Zaremba et al.\'s small config: 0.5; 1: constant, as Chainer)' })
  ap:option('--decay-after', { type = 'number', default = 4, help = 'Epochs trained at --lr before --lr-decay applies' })
  ap:option('--log-interval', { type = 'number', help = 'LogReport/PrintReport interval in iterations (default 500; 10 with --test)' })
  ap:option('--train-words', { type = 'number', default = 0, help = 'Use only the first N training words (0: all)' })
  ap:option('--valid-words', { type = 'number', default = 0, help = 'Use only the first N validation and test words (0: all)' })
  ap:flag('--no-snapshot', { help = 'Do not write trainer snapshots every epoch' })
  ap:option('--seed', { type = 'number', help = 'Random seed (initial weights and dropout)' })
  ap:option('--threads', { type = 'number', help = 'CPU threads for the math kernels' })
  return ap
end

-- Applies --seed and --threads; returns the device of --device.
function M.setup(args)
  if args.seed then chainer.tensor.random.seed(args.seed) end
  if args.threads then chainer.set_num_threads(args.threads) end
  return M.device_arg(args.device)
end

-- The Penn Treebank word sequences (cut by --test, --train-words and
-- --valid-words) and the vocabulary size; prints '#vocab = N'.
function M.load_words(args)
  local train, val, test = datasets.get_ptb_words()
  local n_vocab = train:max():item() + 1   -- train is just an array of integers
  print('#vocab = ' .. n_vocab)
  local function head(t, n) return t:slice({ 0, math.min(n, t.size) }) end
  if args.test then
    train, val, test = head(train, 100), head(val, 100), head(test, 100)
  end
  if args.train_words > 0 then train = head(train, args.train_words) end
  if args.valid_words > 0 then val, test = head(val, args.valid_words), head(test, args.valid_words) end
  return train, val, test, n_vocab
end

-- The validation Evaluator on a copy of `model` that shares the parameters
-- but has its own LSTM state, reset before each pass over the validation
-- stream; returns that copy (for the final test).
function M.add_evaluator(trainer, val_iter, model, device, converter)
  local eval_model = model:copy()
  local eval_rnn = eval_model.predictor
  trainer:extend(extensions.Evaluator(val_iter, eval_model, { device = device, converter = converter,
    eval_hook = function() eval_rnn:reset_state() end }))
  return eval_model
end

-- The learning-rate schedule of --lr-decay/--decay-after: the epoch with
-- 0-based index i runs at lr * lr_decay^max(i + 1 - decay_after, 0).  It is
-- computed from the epoch count alone (also when the trainer starts), so a
-- resumed run continues the same schedule.
function M.add_lr_schedule(trainer, optimizer, args)
  if args.lr_decay == 1 then return end
  local function apply(tr)
    local next_epoch = tr.updater.epoch
    optimizer.lr = args.lr * args.lr_decay ^ math.max(next_epoch + 1 - args.decay_after, 0)
  end
  trainer:extend(training.make_extension({ trigger = { 1, 'epoch' }, initializer = apply,
    default_name = 'lr_schedule' }, apply))
  trainer:extend(extensions.observe_lr())
end

-- LogReport (with perplexities) and PrintReport every `interval`
-- iterations, the progress bar, snapshots unless --no-snapshot, --resume.
function M.add_reports(trainer, args, model, interval)
  trainer:extend(extensions.LogReport({ postprocess = M.compute_perplexity, trigger = { interval, 'iteration' } }))
  trainer:extend(extensions.PrintReport({ 'epoch', 'iteration', 'perplexity', 'val_perplexity', 'elapsed_time' }),
    { trigger = { interval, 'iteration' } })
  trainer:extend(extensions.ProgressBar({ update_interval = args.test and 1 or 10 }))
  if not args.no_snapshot then
    trainer:extend(extensions.snapshot())
    trainer:extend(extensions.snapshot_object(model, 'model_iter_{.updater.iteration}'))
  end
  if args.resume ~= '' then
    serializers.load_npz(args.resume, trainer, { strict = not args.resume_lenient })
  end
end

-- Evaluates the final model on the test stream (prints its perplexity) and
-- saves `model` as --out/--model.
function M.test_and_save(args, model, eval_model, test_iter, device, converter)
  print('test')
  eval_model.predictor:reset_state()
  local evaluator = extensions.Evaluator(test_iter, eval_model, { device = device, converter = converter })
  local result = evaluator()
  print(string.format('test perplexity: %.10g', math.exp(result['main/loss'])))
  os.execute('mkdir -p ' .. args.out)
  serializers.save_npz(args.out .. '/' .. args.model, model)
end

return M

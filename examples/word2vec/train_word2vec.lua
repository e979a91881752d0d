-- examples/word2vec/train_word2vec.lua: Chainer's word2vec example --
-- skip-gram or continuous bag of words on the Penn Treebank, with
-- hierarchical softmax, negative sampling or the plain softmax as output.
--
--   chainlua examples/word2vec/train_word2vec.lua --test
--   chainlua examples/word2vec/train_word2vec.lua --out-type ns --epoch 5 --out result/word2vec
--   chainlua examples/word2vec/search.lua --model result/word2vec/word2vec.model
--
-- After training, <out>/word2vec.model holds the embeddings as text: a
-- "n_vocab n_units" line, then "word v1 v2 ..." per word (search.lua reads it).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local I = require 'chainer.initializers'
local T = require 'chainer.tensor'
local datasets = require 'chainer.datasets'
local optimizers = require 'chainer.optimizers'
local serializers = require 'chainer.serializers'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'
local Iterator = require 'chainer.dataset.iterator'
local ffi = require 'ffi'

local ap = require('chainer.utils.argparse')('Chainer example: word2vec')
ap.prog = 'chainlua examples/word2vec/train_word2vec.lua'
ap:option('--device', '-d', { default = '-1', help = "Device specifier: -1 or 'cpu' for CPU, N or 'cuda:N' for a GPU",
  aliases = { '--gpu', '-g' } })
ap:option('--unit', '-u', { type = 'number', default = 100, help = 'Number of units' })
ap:option('--window', '-w', { type = 'number', default = 5, help = 'Window size' })
ap:option('--batchsize', '-b', { type = 'number', default = 1000, help = 'Learning minibatch size' })
ap:option('--epoch', '-e', { type = 'number', default = 20, help = 'Number of epochs to learn' })
ap:option('--model', '-m', { default = 'skipgram', help = 'Model architecture: skipgram or cbow' })
ap:option('--negative-size', { type = 'number', default = 5, help = 'Number of negative samples' })
ap:option('--out-type', '-o', { default = 'hsm', help = 'Output model type: hsm (hierarchical softmax), ' ..
  'ns (negative sampling) or original (no approximation)' })
ap:option('--out', { default = 'result', help = 'Directory to output the result' })
ap:option('--snapshot-interval', { type = 'number', help = 'Interval of snapshots (epochs; default: --epoch)' })
ap:option('--resume', '-r', { default = '', help = 'Resume the training from snapshot' })
ap:flag('--test', { help = 'Use tiny datasets for quick tests' })
-- chainlua extras
ap:option('--train-words', { type = 'number', default = 0, help = 'Use only the first N training and validation words (0: all)' })
ap:option('--seed', { type = 'number', help = 'Random seed (initial weights, windows, negative samples)' })
ap:option('--threads', { type = 'number', help = 'CPU threads for the math kernels' })
ap:flag('--noprogress', { help = 'No progress bar' })
local args = ap:parse(arg)

if args.model ~= 'skipgram' and args.model ~= 'cbow' then
  error("train_word2vec: --model must be 'skipgram' or 'cbow' (got '" .. args.model .. "')", 0)
end
if args.out_type ~= 'hsm' and args.out_type ~= 'ns' and args.out_type ~= 'original' then
  error("train_word2vec: --out-type must be 'hsm', 'ns' or 'original' (got '" .. args.out_type .. "')", 0)
end
if args.seed then T.random.seed(args.seed) end
if args.threads then chainer.set_num_threads(args.threads) end
local device = tonumber(args.device) or args.device

print('Device: ' .. tostring(args.device))
print('# unit: ' .. args.unit)
print('Window: ' .. args.window)
print('Minibatch-size: ' .. args.batchsize)
print('# epoch: ' .. args.epoch)
print('Training model: ' .. args.model)
print('Output type: ' .. args.out_type)
print('')

---------------------------------------------------------------------------
-- Models: the center word and its context words share one embedding.
---------------------------------------------------------------------------
-- CBOW: the mean of the context embeddings predicts the center word.
local ContinuousBoW = chainer.Chain:extend('ContinuousBoW')
function ContinuousBoW:init(n_vocab, n_units, loss_func)
  self.embed = L.EmbedID(n_vocab, n_units, I.Uniform(1 / n_units))
  self.loss_func = loss_func
end
function ContinuousBoW:forward(x, contexts)
  local e = self.embed(contexts)                      -- (batch, n_context, units)
  local h = F.sum(e, 1) * (1 / contexts.shape[2])
  local loss = self.loss_func(h, x)
  chainer.report({ loss = loss }, self)
  return loss
end

-- Skip-gram: the center word's embedding predicts each context word... as
-- in Chainer's example, written the other way round: each context word's
-- embedding is paired with the center word as the target.
local SkipGram = chainer.Chain:extend('SkipGram')
function SkipGram:init(n_vocab, n_units, loss_func)
  self.embed = L.EmbedID(n_vocab, n_units, I.Uniform(1 / n_units))
  self.loss_func = loss_func
end
function SkipGram:forward(x, contexts)
  local e = self.embed(contexts)
  local b, c, u = e.shape[1], e.shape[2], e.shape[3]
  local xx = F.broadcast_to(F.reshape(x, { b, 1 }), { b, c })
  local loss = self.loss_func(F.reshape(e, { b * c, u }), F.reshape(xx, { b * c }))
  chainer.report({ loss = loss }, self)
  return loss
end

-- The plain softmax over the whole vocabulary.
local SoftmaxCrossEntropyLoss = chainer.Chain:extend('SoftmaxCrossEntropyLoss')
function SoftmaxCrossEntropyLoss:init(n_in, n_out)
  self.out = L.Linear(n_in, n_out, { initialW = 0 })
end
function SoftmaxCrossEntropyLoss:forward(x, t)
  return F.softmax_cross_entropy(self.out(x), t)
end

---------------------------------------------------------------------------
-- WindowIterator(dataset, window, batch_size, {loop = true}): random center
-- positions (an epoch visits each of [window, len - window) once, in a new
-- random order each epoch); each batch draws a half-width w in
-- 1..window-1 and returns {center (batch,), contexts (batch, 2w)}.
---------------------------------------------------------------------------
local WindowIterator = Iterator:extend('WindowIterator')
function WindowIterator:init(dataset, window, batch_size, opts)
  self.dataset = dataset:astype('int32'):contiguous()
  self._ptr = ffi.cast('int32_t*', self.dataset.ptr.data) + self.dataset.ptr.offset
  self.window = window
  self.batch_size = batch_size
  self['repeat'] = not (type(opts) == 'table' and opts.loop == false)
  self.n_order = self.dataset.size - 2 * window
  if self.n_order < 1 then error('WindowIterator: the dataset is shorter than two windows', 3) end
  self:reset()
end

function WindowIterator:_shuffle()
  local perm = T.random.permutation(self.n_order):totable()
  for i = 1, #perm do perm[i] = perm[i] + self.window end
  self.order = perm   -- 0-based dataset positions
end

function WindowIterator:reset()
  self:_shuffle()
  self.current_position = 0
  self.epoch = 0
  self.is_new_epoch = false
  self.epoch_detail = 0
  self.previous_epoch_detail = nil
end

function WindowIterator:next()
  if not self['repeat'] and self.epoch > 0 then return nil end
  local i = self.current_position
  local i_end = math.min(i + self.batch_size, self.n_order)
  local n = i_end - i
  local w = T.random.randint(0, self.window - 1, { 1 }, 'int32'):item() + 1
  local center = T.empty({ n }, 'int32')
  local contexts = T.empty({ n, 2 * w }, 'int32')
  local pc = ffi.cast('int32_t*', center.ptr.data)
  local px = ffi.cast('int32_t*', contexts.ptr.data)
  local d, order = self._ptr, self.order
  for k = 0, n - 1 do
    local pos = order[i + k + 1]
    pc[k] = d[pos]
    local row = k * 2 * w
    for o = 1, w do
      px[row + w - o] = d[pos - o]
      px[row + w + o - 1] = d[pos + o]
    end
  end
  self.previous_epoch_detail = self.epoch_detail
  if i_end >= self.n_order then
    self:_shuffle()
    self.epoch = self.epoch + 1
    self.is_new_epoch = true
    self.current_position = 0
  else
    self.is_new_epoch = false
    self.current_position = i_end
  end
  self.epoch_detail = self.epoch + self.current_position / self.n_order
  return { center, contexts }
end

function WindowIterator:serialize(serializer)
  local util = require 'chainer.training._util'
  self.current_position = util.ser_number(serializer, 'current_position', self.current_position)
  self.epoch = util.ser_number(serializer, 'epoch', self.epoch)
  self.is_new_epoch = util.ser_bool(serializer, 'is_new_epoch', self.is_new_epoch)
  local o = serializer('order', T.array(self.order, 'int32'))
  if T.is_tensor(o) then self.order = o:totable() end
  self.epoch_detail = self.epoch + self.current_position / self.n_order
end

-- The batch already is {center, contexts}.
local function convert(batch, dev)
  if dev ~= nil and dev ~= -1 and dev ~= '-1' and dev ~= 'cpu' then
    return { batch[1]:to_device(dev), batch[2]:to_device(dev) }
  end
  return batch
end

---------------------------------------------------------------------------
-- Data
---------------------------------------------------------------------------
local train, val = datasets.get_ptb_words()
local n_vocab = train:max():item() + 1
-- word frequencies over train and validation (for the Huffman tree and the
-- negative-sampling distribution)
local counts = {}
for i = 0, n_vocab - 1 do counts[i] = 0 end
for _, data in ipairs({ train, val }) do
  local c = data:contiguous()
  local p = ffi.cast('int32_t*', c.ptr.data) + c.ptr.offset
  for i = 0, c.size - 1 do counts[p[i]] = counts[p[i]] + 1 end
end
if args.test then
  train, val = train:slice({ 0, 100 }), val:slice({ 0, 100 })
elseif args.train_words > 0 then
  train, val = train:slice({ 0, math.min(args.train_words, train.size) }),
      val:slice({ 0, math.min(args.train_words, val.size) })
end

local vocab = datasets.get_ptb_words_vocabulary()
local index2word = {}
for w, id in pairs(vocab) do index2word[id] = w end

print('n_vocab: ' .. n_vocab)
print('data length: ' .. train.size)

-- The Huffman tree of L.BinaryHierarchicalSoftmax.create_huffman_tree
-- (merge the two lightest, ties by creation order), built with a binary
-- heap: the same tree, in O(n log n) for the 10000 PTB words.
local function huffman_tree(word_counts)
  local heap, n = {}, 0
  local function less(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end
  local function push(e)
    n = n + 1
    heap[n] = e
    local i = n
    while i > 1 do
      local p = math.floor(i / 2)
      if not less(heap[i], heap[p]) then break end
      heap[i], heap[p] = heap[p], heap[i]
      i = p
    end
  end
  local function pop()
    local top = heap[1]
    heap[1] = heap[n]
    heap[n] = nil
    n = n - 1
    local i = 1
    while true do
      local l, r, m = 2 * i, 2 * i + 1, i
      if l <= n and less(heap[l], heap[m]) then m = l end
      if r <= n and less(heap[r], heap[m]) then m = r end
      if m == i then break end
      heap[i], heap[m] = heap[m], heap[i]
      i = m
    end
    return top
  end
  local ids = {}
  for k in pairs(word_counts) do ids[#ids + 1] = k end
  table.sort(ids)
  for uid, w in ipairs(ids) do push({ word_counts[w], uid, w }) end
  local uid = #ids
  while n >= 2 do
    local a, b = pop(), pop()
    uid = uid + 1
    push({ a[1] + b[1], uid, { a[3], b[3] } })
  end
  return heap[1][3]
end

local loss_func
if args.out_type == 'hsm' then
  local HSM = L.BinaryHierarchicalSoftmax
  local tree_counts = {}
  for id, c in pairs(counts) do if c > 0 then tree_counts[id] = c end end
  loss_func = HSM(args.unit, huffman_tree(tree_counts))
  loss_func.W.array:fill_(0)
elseif args.out_type == 'ns' then
  local cs = {}
  for i = 0, n_vocab - 1 do cs[i + 1] = counts[i] end
  loss_func = L.NegativeSampling(args.unit, cs, args.negative_size)
  loss_func.W.array:fill_(0)
else
  loss_func = SoftmaxCrossEntropyLoss(args.unit, n_vocab)
end

local model
if args.model == 'skipgram' then model = SkipGram(n_vocab, args.unit, loss_func)
else model = ContinuousBoW(n_vocab, args.unit, loss_func) end
if device ~= -1 and device ~= 'cpu' then model:to_device(device) end

local optimizer = optimizers.Adam():setup(model)

local train_iter = WindowIterator(train, args.window, args.batchsize)
local val_iter = WindowIterator(val, args.window, args.batchsize, { loop = false })

local updater = training.StandardUpdater(train_iter, optimizer, { converter = convert, device = device })
local trainer = training.Trainer(updater, { args.epoch, 'epoch' }, { out = args.out })

trainer:extend(extensions.Evaluator(val_iter, model, { converter = convert, device = device }))
trainer:extend(extensions.LogReport())
trainer:extend(extensions.PrintReport({ 'epoch', 'main/loss', 'validation/main/loss', 'elapsed_time' }))
if not args.noprogress then trainer:extend(extensions.ProgressBar()) end
trainer:extend(extensions.snapshot({ filename = 'snapshot_epoch_{.updater.epoch}' }),
  { trigger = { args.snapshot_interval or args.epoch, 'epoch' } })
if args.resume ~= '' then serializers.load_npz(args.resume, trainer) end

trainer:run()

-- Save the word2vec model
os.execute('mkdir -p ' .. args.out)
local path = args.out .. '/word2vec.model'
local f = assert(io.open(path, 'w'))
f:write(string.format('%d %d\n', n_vocab, args.unit))
local w = model.embed.W.array:to_device(-1):astype('float64'):contiguous()
local pw = ffi.cast('double*', w.ptr.data) + w.ptr.offset
for i = 0, n_vocab - 1 do
  local parts = { index2word[i] or ('<id' .. i .. '>') }
  for j = 0, args.unit - 1 do parts[j + 2] = string.format('%.9g', pw[i * args.unit + j]) end
  f:write(table.concat(parts, ' '), '\n')
end
f:close()
print('wrote ' .. path)

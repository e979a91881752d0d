-- examples/ptb/ptb_common.lua: the pieces train_ptb.lua, train_ptb_nstep.lua
-- and gentxt.lua share: the language model RNNForLM, the parallel
-- sequential iterator, the BPTT updater and the batch converter.
--
-- (Chainer keeps them inside train_ptb.py; gentxt.py imports them from there.)
local chainer = require 'chainer'
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

return M

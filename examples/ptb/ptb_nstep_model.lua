-- examples/ptb/ptb_nstep_model.lua: the NStepLSTM variant of the PTB
-- language model (train_ptb_nstep.lua, gentxt.lua --nstep).
--
-- Instead of calling two stateful LSTM links once per time step, the model
-- takes a whole BPTT window -- a (batch, len) block of word ids, one row
-- per stream -- and runs it through L.NStepLSTM in one call: the embedding,
-- the output Linear and the softmax cross entropy each run once on all
-- batch*len positions, which is what makes this variant faster.  The final
-- hidden and cell states are kept (detached: that is the truncation) and
-- start the next window.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local T = require 'chainer.tensor'
local Iterator = require 'chainer.dataset.iterator'
local ffi = require 'ffi'

local M = {}

local RNNForLMNStep = chainer.Chain:extend('RNNForLMNStep')
function RNNForLMNStep:init(n_vocab, n_units, dropout, n_layers)
  self.embed = L.EmbedID(n_vocab, n_units)
  self.lstm = L.NStepLSTM(n_layers or 2, n_units, n_units, dropout or 0)
  self.out = L.Linear(n_units, n_vocab)
  self.dropout = dropout or 0
  for p in self:params() do p.array:uniform_(-0.1, 0.1) end
  self:reset_state()
end

function RNNForLMNStep:reset_state()
  rawset(self, 'hx', nil)
  rawset(self, 'cx', nil)
end

-- x: int32 (batch, len) or (batch,) word ids -> logits (batch*len, n_vocab),
-- row b*len + j is stream b at step j.
function RNNForLMNStep:forward(x)
  if x.ndim == 1 then x = x:reshape({ x.shape[1], 1 }) end
  local e = self.embed(x)                       -- (batch, len, units)
  if self.dropout > 0 then e = F.dropout(e, self.dropout) end
  local xs = F.separate(e, 0)                   -- batch sequences of (len, units)
  local hx, cx = rawget(self, 'hx'), rawget(self, 'cx')
  -- a shorter last batch (evaluation) continues the leading streams
  if hx ~= nil and hx.shape[2] ~= #xs then
    hx = F.get_item(hx, { {}, { 0, #xs } })
    cx = F.get_item(cx, { {}, { 0, #xs } })
  end
  local hy, cy, ys = self.lstm(hx, cx, xs)
  -- truncated BPTT: the next window starts from the state, not its history
  rawset(self, 'hx', chainer.Variable(hy.array))
  rawset(self, 'cx', chainer.Variable(cy.array))
  local h = F.concat(ys, 0)
  if self.dropout > 0 then h = F.dropout(h, self.dropout) end
  return self.out(h)
end
M.RNNForLMNStep = RNNForLMNStep

-- LMLoss(predictor): mean softmax cross entropy over every position of the
-- window, reported as 'loss' (so perplexity = exp(main/loss) as in
-- train_ptb.lua).
local LMLoss = chainer.Chain:extend('LMLoss')
function LMLoss:init(predictor) self.predictor = predictor end
function LMLoss:forward(x, t)
  local y = self.predictor(x)
  local loss = F.softmax_cross_entropy(y, t:reshape({ t.size }))
  chainer.report({ loss = loss }, self)
  return loss
end
M.LMLoss = LMLoss

---------------------------------------------------------------------------
-- WindowedSequentialIterator(dataset, batch_size, bprop_len, {loop}): a
-- ParallelSequentialIterator read bprop_len steps at a time.  A batch is a
-- Lua array of windows, one per stream: {words = {...}, next = {...}}.
-- Without repeat the last window may be shorter; then nil.
---------------------------------------------------------------------------
local WSI = Iterator:extend('WindowedSequentialIterator')
M.WindowedSequentialIterator = WSI

function WSI:init(psi, bprop_len)
  self.inner = psi
  self.bprop_len = bprop_len
  self.batch_size = psi.batch_size
  self['repeat'] = psi.loop
  self:_sync()
end

function WSI:_sync()
  local p = self.inner
  self.epoch, self.iteration = p.epoch, p.iteration
  self.epoch_detail, self.previous_epoch_detail = p.epoch_detail, p.previous_epoch_detail
end

function WSI:reset()
  self.inner:reset()
  self.is_new_epoch = false
  self:_sync()
end

function WSI:next()
  local steps = {}
  local prev = self.inner.epoch_detail
  local new_epoch = false
  for j = 1, self.bprop_len do
    local b = self.inner:next()
    if b == nil then break end
    steps[j] = b
    if self.inner.is_new_epoch then new_epoch = true end
  end
  if #steps == 0 then return nil end
  self.is_new_epoch = new_epoch
  self:_sync()
  self.previous_epoch_detail = prev
  return steps
end

function WSI:serialize(serializer)
  self.inner:serialize(serializer)
  self:_sync()
end

-- convert(steps, device) -> x, t: int32 (batch, len) blocks.
function M.convert(steps, device)
  local len, n = #steps, #steps[1]
  local x, t = T.empty({ n, len }, 'int32'), T.empty({ n, len }, 'int32')
  local px = ffi.cast('int32_t*', x.ptr.data) + x.ptr.offset
  local pt = ffi.cast('int32_t*', t.ptr.data) + t.ptr.offset
  for j = 1, len do
    local s = steps[j]
    for b = 1, n do
      px[(b - 1) * len + j - 1] = s[b][1]
      pt[(b - 1) * len + j - 1] = s[b][2]
    end
  end
  if device ~= nil and device ~= -1 and device ~= '-1' and device ~= 'cpu' and device ~= '@numpy' then
    x, t = x:to_device(device), t:to_device(device)
  end
  return { x, t }
end

return M

-- iterators/serial_iterator.lua: SerialIterator, Chainer's plain minibatch
-- iterator.
--
--   SerialIterator(dataset, batch_size, {loop = true, shuffle = true, order_sampler = s})
--   SerialIterator(dataset, batch_size, repeat, shuffle, order_sampler)   -- Chainer's positional form
--
-- `repeat` is a Lua keyword: the option is `loop` (`['repeat']` works too).
-- Fields (plain, updated by next/reset/serialize): batch_size, epoch,
-- epoch_detail, previous_epoch_detail (nil before the first batch),
-- is_new_epoch, iteration, current_position, dataset.
-- it:next() returns a Lua array of examples, or nil once a non-repeating
-- iterator has finished its epoch; `for batch in it do ... end` works too.
-- Datasets with a get_examples batch method (TupleDataset/DictDataset of
-- tensors, SubDatasets of them, tensors) are gathered with one take per
-- array, and concat_examples reuses those arrays.
local Iterator = require 'chainer.dataset.iterator'
local P = require 'chainer.dataset.protocol'
local convert = require 'chainer.dataset.convert'
local samplers = require 'chainer.iterators.order_samplers'
local S = require 'chainer.iterators.state'
local base_serializer = require 'chainer.serializer'
local optional, optional_child = base_serializer.optional, base_serializer.optional_child
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local ffi = T.ffi

local M = {}

-- Chainer's (repeat, shuffle, order_sampler) arguments, positional or in
-- a trailing options table; `repeat` is a Lua keyword, so its name is
-- `loop` (`['repeat']` and `repeat_` are accepted too).
M.SIGNATURE = args.signature({ 'loop', 'shuffle', 'order_sampler' }, { 'repeat', 'repeat_' })

-- Reads the iterator arguments (after dataset and batch_size) with `sig`,
-- returns loop, sampler, and the table of all given arguments.
function M.read_arguments(fn, sig, level, n, ...)
  level = (level or 2) + 1
  local given = args.parse_at(level, fn, sig, n, ...)
  local loop = given.loop
  if loop == nil then loop = given['repeat'] end
  if loop == nil then loop = given.repeat_ end
  local shuffle, sampler = given.shuffle, given.order_sampler
  if loop == nil then loop = true end
  if type(loop) ~= 'boolean' then
    error(string.format('%s: loop (repeat) must be a boolean (got %s)', fn, type(loop)), level)
  end
  if shuffle ~= nil and type(shuffle) ~= 'boolean' then
    error(string.format('%s: shuffle must be a boolean (got %s)', fn, type(shuffle)), level)
  end
  if shuffle ~= nil then
    if sampler ~= nil then
      error(string.format('%s: shuffle is given together with a custom order_sampler; leave shuffle out to ' ..
        'use the order sampler', fn), level)
    end
    if shuffle then sampler = samplers.ShuffleOrderSampler() end
  elseif sampler == nil then
    sampler = samplers.ShuffleOrderSampler()
  end
  if sampler ~= nil and type(sampler) ~= 'function' and not (type(sampler) == 'table' and getmetatable(sampler)
      and getmetatable(sampler).__call) then
    error(string.format('%s: order_sampler must be callable as sampler(order, position) (got %s)', fn,
      type(sampler)), level)
  end
  return loop, sampler, given
end

function M.check_batch_size(fn, batch_size, level)
  if type(batch_size) ~= 'number' or batch_size ~= math.floor(batch_size) or batch_size < 1 then
    error(string.format('%s: batch_size must be a positive integer (got %s)', fn, tostring(batch_size)),
      (level or 2) + 1)
  end
end

-- The examples at 0-based positions idx (int64 tensor) of dataset ds.
function M.fetch(ds, idx)
  local arrays, examples = P.gather(ds, idx)
  local m = tonumber(idx.ptr.dim[0])
  if arrays ~= nil then
    return convert.attach(P.unstack(arrays, m), arrays)
  end
  if examples ~= nil then return examples end
  local c = idx:contiguous()
  local p = ffi.cast('int64_t*', c.ptr.data) + c.ptr.offset
  local batch = {}
  for k = 0, m - 1 do batch[k + 1] = P.get(ds, tonumber(p[k]) + 1) end
  return batch
end

-- Serializes an epoch state (Chainer's keys) through `serializer`.
function M.serialize_state(it, st, serializer)
  local pos = serializer('current_position', st.pos)
  local epoch = serializer('epoch', st.epoch)
  local new_epoch = serializer('is_new_epoch', st.is_new_epoch)
  st.pos, st.epoch = tonumber(pos), tonumber(epoch)
  st.is_new_epoch = new_epoch == true or (type(new_epoch) == 'number' and new_epoch ~= 0)
  if st.order ~= nil then
    -- Chainer's files name it 'order' (older ones '_order')
    local v, found = optional(serializer, 'order', st.order)
    if not found then v = serializer('_order', st.order) end
    if T.is_tensor(v) then st.order = v end
  end
  local prev, found = optional(serializer, 'previous_epoch_detail', it._prev)
  if found and type(prev) == 'number' then
    it._prev = prev
  else
    -- a file from an older Chainer: guess it from the position
    local n = it._epoch_size
    local ed = st.epoch + (n > 0 and st.pos / n or 0)
    local guess = st.epoch + (n > 0 and (st.pos - it.batch_size) / n or 0)
    if ed > 0 then it._prev = math.max(guess, 0) else it._prev = -1 end
  end
  -- the sampler's state is chainlua's (Chainer saves none): it may be absent
  local sampler = it.order_sampler
  if type(sampler) == 'table' and sampler.serialize ~= nil then
    sampler:serialize(optional_child(serializer, 'order_sampler'))
  end
end

local SerialIterator = Iterator:extend('SerialIterator')
M.SerialIterator = SerialIterator

function SerialIterator:init(dataset, batch_size, ...)
  M.check_batch_size('SerialIterator', batch_size, 3)
  self._epoch_size = P.len(dataset, 'SerialIterator')
  self.dataset = dataset
  self.batch_size = batch_size
  self._repeat, self.order_sampler = M.read_arguments('SerialIterator', M.SIGNATURE, 3, select('#', ...), ...)
  self['repeat'] = self._repeat
  self:reset()
end

local sync = S.sync

function SerialIterator:reset()
  local n = P.len(self.dataset, 'SerialIterator')
  self._epoch_size = n
  self._state = { pos = 0, epoch = 0, is_new_epoch = false, order = S.new_order(self.order_sampler, n) }
  self._prev = -1
  self.iteration = 0
  sync(self)
end

function SerialIterator:next()
  local st = self._state
  local prev = self.epoch_detail
  local idx = S.advance(st, self.batch_size, self._repeat, self.order_sampler, self._epoch_size)
  if idx == nil then
    sync(self)
    return nil
  end
  self._prev = prev
  self.iteration = self.iteration + 1
  sync(self)
  return M.fetch(self.dataset, idx)
end

-- The current epoch's order (int64 tensor of 0-based positions), or nil
-- when the iterator does not shuffle.
function SerialIterator:order() return self._state.order end

function SerialIterator:serialize(serializer)
  M.serialize_state(self, self._state, serializer)
  sync(self)
end

return M

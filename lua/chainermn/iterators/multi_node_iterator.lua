-- chainermn/iterators/multi_node_iterator.lua:
-- create_multi_node_iterator(actual_iterator, comm, rank_master = 0), as
-- ChainerMN's.
--
-- On the master rank the result wraps actual_iterator; on the others it is
-- a receiver whose actual_iterator argument is ignored (it may be nil).
-- Every next() is a collective: the master takes the next batch and
-- broadcasts it (bcast_obj) with its iterator's position, and every rank
-- returns that batch, nil at the end of a non-repeating iterator.  reset()
-- and serialize() are collectives too.  The fields (batch_size, epoch,
-- epoch_detail, previous_epoch_detail, is_new_epoch, iteration,
-- current_position, dataset_size) are the master iterator's on every rank.
--
-- ChainerMN broadcasts only arrays and (x, y) pairs, as float32 (labels
-- come back int32); here a batch is any value bcast_obj sends (tensors
-- keep their dtypes), and one that cannot be sent is an error on every rank.
local Iterator = require 'chainer.dataset.iterator'
local P = require 'chainer.dataset.protocol'

local M = {}

local FIELDS = { 'batch_size', 'epoch', 'epoch_detail', 'previous_epoch_detail', 'is_new_epoch', 'iteration',
  'current_position' }

-- The master iterator's public state as one table.
local function state_of(it)
  local s = {}
  for _, k in ipairs(FIELDS) do s[k] = it[k] end
  return s
end

local function adopt(self, s)
  for _, k in ipairs(FIELDS) do self[k] = s[k] end
end

-- Every rank's part of a broadcast from the master: the master sends
-- `value` (or, when `problem` is set, a refusal, and raises it); the others
-- receive it, or raise naming the master.
local function share(self, what, value, problem)
  local comm, root = self.communicator, self.rank_master
  local sent = comm.rank == root and { ok = not problem, value = value } or nil
  local ok, got = pcall(comm.bcast_obj, comm, sent, root)
  if not ok then
    error(string.format('%s: the master (rank %d) could not send %s (%s)', what, root,
      what == 'MultiNodeIterator.next' and 'the batch' or 'its state', tostring(got):gsub('^bcast_obj: ', '')), 3)
  end
  if not got.ok then
    error(problem or string.format('%s: the master (rank %d) passed a bad iterator', what, root), 3)
  end
  return got.value
end

local MultiNodeIterator = Iterator:extend('MultiNodeIterator')
M.MultiNodeIterator = MultiNodeIterator

function MultiNodeIterator:init(actual_iterator, comm, rank_master, problem)
  self.communicator, self.rank_master = comm, rank_master
  self.is_master = comm.rank == rank_master
  if self.is_master then self.actual_iterator = actual_iterator end
  local first
  if self.is_master and not problem then
    first = state_of(actual_iterator)
    first.dataset_size = P.len(actual_iterator.dataset, 'create_multi_node_iterator')
  end
  first = share(self, 'create_multi_node_iterator', first, problem)
  self.dataset_size = first.dataset_size
  adopt(self, first)
end

-- next(): the master's next batch on every rank (nil after the last one).
function MultiNodeIterator:next()
  local sent
  if self.is_master then
    local batch = self.actual_iterator:next()
    sent = state_of(self.actual_iterator)
    sent.batch = batch
  end
  local got = share(self, 'MultiNodeIterator.next', sent)
  adopt(self, got)
  return got.batch
end

-- reset(): the master's iterator starts again, and every rank learns it.
function MultiNodeIterator:reset()
  if self.is_master then self.actual_iterator:reset() end
  adopt(self, share(self, 'MultiNodeIterator.reset', self.is_master and state_of(self.actual_iterator) or nil))
end

function MultiNodeIterator:finalize()
  if self.is_master then self.actual_iterator:finalize() end
end

-- serialize(serializer): the master serializes its iterator and sends the
-- result; the others serialize what it sent under Chainer's keys
-- (current_position, epoch, is_new_epoch), so a loaded snapshot gives
-- every rank the master's state.
function MultiNodeIterator:serialize(serializer)
  local sent
  if self.is_master then
    self.actual_iterator:serialize(serializer)
    sent = state_of(self.actual_iterator)
  end
  local got = share(self, 'MultiNodeIterator.serialize', sent)
  if not self.is_master then
    got.current_position = tonumber(serializer('current_position', got.current_position))
    got.epoch = tonumber(serializer('epoch', got.epoch))
    local new_epoch = serializer('is_new_epoch', got.is_new_epoch)
    got.is_new_epoch = new_epoch == true or (type(new_epoch) == 'number' and new_epoch ~= 0)
    local n = self.dataset_size
    got.epoch_detail = got.epoch + (n > 0 and got.current_position / n or 0)
  end
  adopt(self, got)
end

function M.create_multi_node_iterator(actual_iterator, comm, rank_master)
  local fn = 'create_multi_node_iterator'
  if type(comm) ~= 'table' or type(comm.bcast_obj) ~= 'function' then
    error(fn .. ': the second argument must be a chainermn communicator (got ' .. type(comm) .. ')', 2)
  end
  rank_master = rank_master or 0
  if type(rank_master) ~= 'number' or rank_master ~= math.floor(rank_master) or rank_master < 0 or
      rank_master >= comm.size then
    error(string.format('%s: rank_master must be a rank in 0..%d (got %s)', fn, comm.size - 1, tostring(rank_master)), 2)
  end
  local problem
  if comm.rank == rank_master and (type(actual_iterator) ~= 'table' or type(actual_iterator.next) ~= 'function' or
      actual_iterator.dataset == nil) then
    problem = fn .. ': the master must pass a chainer iterator with a dataset (got ' .. type(actual_iterator) .. ')'
  end
  return MultiNodeIterator(actual_iterator, comm, rank_master, problem)
end

return M

-- chainermn/iterators/synchronized_iterator.lua:
-- create_synchronized_iterator(actual_iterator, comm), as ChainerMN's.
--
-- Rank 0 draws a seed and broadcasts it; every rank's iterator gets a
-- ShuffleOrderSampler with that seed and is reset, so all ranks visit their
-- (identical) datasets in the same random order without sending a batch.
-- ChainerMN returns a wrapper that forwards everything to the iterator;
-- here the iterator itself is returned, its sampler replaced (a
-- non-shuffling iterator starts shuffling, as in ChainerMN).  A collective:
-- every rank calls it.
local Object = require('chainer.class').Object
local rng = require 'chainer.dataset.rng'
local ShuffleOrderSampler = require('chainer.iterators.order_samplers').ShuffleOrderSampler

local M = {}

-- The iterator classes that draw their orders from an order_sampler (a
-- nil order_sampler means they do not shuffle); only loaded ones can be
-- the class of an argument.
local SAMPLING_ITERATORS = {
  { 'chainer.iterators.serial_iterator', 'SerialIterator' },
  { 'chainer.iterators.multithread_iterator', 'MultithreadIterator' },
  { 'chainer.iterators.multiprocess_iterator', 'MultiprocessIterator' },
}

local function has_order_sampler(it)
  if it.order_sampler ~= nil then return true end
  for _, c in ipairs(SAMPLING_ITERATORS) do
    local module = package.loaded[c[1]]
    if module and Object.isinstance(it, module[c[2]]) then return true end
  end
  return false
end

function M.create_synchronized_iterator(actual_iterator, comm)
  local fn = 'create_synchronized_iterator'
  if type(comm) ~= 'table' or type(comm.bcast_obj) ~= 'function' then
    error(fn .. ': the second argument must be a chainermn communicator (got ' .. type(comm) .. ')', 2)
  end
  local problem
  if type(actual_iterator) ~= 'table' or type(actual_iterator.next) ~= 'function' or
      type(actual_iterator.reset) ~= 'function' then
    problem = fn .. ': actual_iterator must be a chainer iterator (got ' .. type(actual_iterator) .. ')'
  elseif not has_order_sampler(actual_iterator) then
    problem = fn .. ': actual_iterator must have order_sampler (an iterator such as SerialIterator)'
  end
  -- rank 0 sends the seed, or nothing when its argument is bad: then every rank raises
  local seed = comm:bcast_obj(comm.rank == 0 and not problem and rng.fresh_seed() or nil, 0)
  if problem then error(problem, 2) end
  if seed == nil then error(fn .. ': rank 0 passed a bad iterator', 2) end
  actual_iterator.order_sampler = ShuffleOrderSampler(seed)
  -- (the prefetching iterators restore their previous sampler's state at
  -- reset; the new sampler must start from its seed)
  rawset(actual_iterator, '_sampler_visible', nil)
  actual_iterator:reset()
  return actual_iterator
end

return M

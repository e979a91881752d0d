-- chainer.iterators: dataset iterators and order samplers.
local samplers = require 'chainer.iterators.order_samplers'

local M = {}
M.SerialIterator = require('chainer.iterators.serial_iterator').SerialIterator
M.OrderSampler = samplers.OrderSampler
M.ShuffleOrderSampler = samplers.ShuffleOrderSampler

-- MultithreadIterator (and MultiprocessIterator, its alias: chainlua never
-- forks) load lazily: they need the runtime's gather queue.
setmetatable(M, {
  __index = function(t, k)
    if k == 'MultithreadIterator' or k == 'MultiprocessIterator' then
      local cls = require('chainer.iterators.multithread_iterator').MultithreadIterator
      rawset(t, 'MultithreadIterator', cls)
      rawset(t, 'MultiprocessIterator', cls)
      return cls
    end
  end,
})

return M

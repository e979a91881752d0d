-- chainer.iterators: dataset iterators and order samplers.
local samplers = require 'chainer.iterators.order_samplers'

local M = {}
M.SerialIterator = require('chainer.iterators.serial_iterator').SerialIterator
M.OrderSampler = samplers.OrderSampler
M.ShuffleOrderSampler = samplers.ShuffleOrderSampler

-- MultithreadIterator (the runtime's gather queue) and MultiprocessIterator
-- (worker processes) load on first use.
local lazy = {
  MultithreadIterator = 'chainer.iterators.multithread_iterator',
  MultiprocessIterator = 'chainer.iterators.multiprocess_iterator',
}
require('chainer._lazy')(M, nil, lazy)

return M

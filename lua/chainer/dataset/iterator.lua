-- dataset/iterator.lua: the base class of dataset iterators (Chainer's
-- chainer.dataset.Iterator).  The contract the training loop relies on:
--
--   fields  batch_size, epoch, iteration, is_new_epoch, epoch_detail,
--           previous_epoch_detail (nil before the first batch)
--           -- plain fields, kept up to date after every next()/reset()
--   it:next()      the next batch, a Lua array of examples; nil at the end
--                  of a non-repeating iterator
--   for batch in it do ... end     (calls next until nil)
--   it:reset(), it:finalize(), it:serialize(serializer)
local class = require 'chainer.class'

local Iterator = class.Object:extend('Iterator')
class.check_self(Iterator)   -- model.cleargrads() (a dot) names the method

Iterator.__call = function(self) return self:next() end

function Iterator:next()
  error(string.format('%s: next is not implemented', tostring(getmetatable(self).__name)), 2)
end

function Iterator:reset()
  error(string.format('%s: reset is not implemented', tostring(getmetatable(self).__name)), 2)
end

function Iterator:finalize() end

function Iterator:serialize(serializer) end

-- for batch in it:batches() do ... end   (same as `for batch in it`)
function Iterator:batches()
  return function() return self:next() end
end

return Iterator

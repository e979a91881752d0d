-- iterators/order_samplers.lua: how an iterator orders each epoch.
--
-- An order sampler is called as sampler(current_order, current_position)
-- and returns the next epoch's order: an int64 tensor of 0-based dataset
-- positions with as many entries as current_order (Chainer's OrderSampler).
--
-- ShuffleOrderSampler([seed]) / ShuffleOrderSampler{seed = n}: a random
-- permutation per epoch from a private Philox stream (dataset/rng.lua).
-- Without a seed, the seed is drawn from the global CPU stream, so
-- chainer.tensor.random.seed(n) beforehand makes the orders reproducible.
-- Its (seed, offset) state is saved with the iterator (serialize), so a
-- resumed run shuffles later epochs exactly as an uninterrupted one.
local class = require 'chainer.class'
local rng = require 'chainer.dataset.rng'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local optional = require('chainer.serializer').optional

local M = {}

local OrderSampler = class.Object:extend('OrderSampler')
OrderSampler.__call = function(self, current_order, current_position)
  return self:sample(current_order, current_position)
end
function OrderSampler:sample()
  error(string.format('%s: sample is not implemented', tostring(getmetatable(self).__name)), 2)
end
M.OrderSampler = OrderSampler

local ShuffleOrderSampler = OrderSampler:extend('ShuffleOrderSampler')

local SAMPLER_OPTIONS = args.accept { 'seed' }

function ShuffleOrderSampler:init(opts)
  local seed = opts
  if type(opts) == 'table' then seed = args.options('ShuffleOrderSampler', opts, SAMPLER_OPTIONS, 3).seed end
  seed = rng.check_seed(seed, 'ShuffleOrderSampler', 3)
  if seed == nil then seed = rng.fresh_seed() end
  self.seed, self.offset = seed, 0
end

function ShuffleOrderSampler:sample(current_order, current_position)
  local n
  if T.is_tensor(current_order) then n = current_order.size
  elseif type(current_order) == 'table' then n = #current_order
  else n = current_order end
  local perm, after = rng.permutation(n, self.seed, self.offset)
  self.offset = after
  return perm
end

function ShuffleOrderSampler:get_state() return self.seed, self.offset end
function ShuffleOrderSampler:set_state(seed, offset) self.seed, self.offset = seed, offset end

-- Saves/restores (seed, offset), chainlua's own keys: Chainer's sampler
-- saves nothing, so both may be absent, and a file without them (a Chainer
-- snapshot) leaves the state as it is.
function ShuffleOrderSampler:serialize(serializer)
  local s, has_seed = optional(serializer, 'seed', self.seed)
  local o, has_offset = optional(serializer, 'offset', self.offset)
  if has_seed and has_offset and s ~= nil and o ~= nil then self.seed, self.offset = tonumber(s), tonumber(o) end
end

M.ShuffleOrderSampler = ShuffleOrderSampler

return M

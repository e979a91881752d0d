-- utils/walker_alias.lua: chainer.utils.WalkerAlias(probs), O(1) sampling
-- of integers 0..n-1 with the given (unnormalised) probabilities by
-- Walker's alias method (Vose's construction).
--
--   local sampler = chainer.utils.WalkerAlias({0.5, 0.25, 0.25})   -- or a tensor
--   local ids = sampler:sample({100, 5})    -- int32 tensor of shape (100, 5)
--
-- Each draw takes one uniform number u in [0, n): column i = floor(u) is
-- kept when frac(u) < threshold[i], otherwise its alias is returned.  The
-- draws come from chainer.tensor.random, so T.random.seed makes them
-- reproducible.  `sampler.sample` can be passed where Chainer passes
-- `walker.sample` (F.negative_sampling accepts the sampler object itself).
local T = require 'chainer.tensor'
local class = require 'chainer.class'

local WalkerAlias = class.Object:extend('WalkerAlias')

function WalkerAlias:init(probs)
  local p
  if T.is_tensor(probs) then
    p = probs:astype('float64'):reshape(-1):totable()
  elseif type(probs) == 'table' and probs._is_variable then
    p = probs.array:astype('float64'):reshape(-1):totable()
  elseif type(probs) == 'table' then
    p = {}
    for i = 1, #probs do p[i] = probs[i] end
  else
    error('WalkerAlias: probs must be a tensor or a table of numbers (got ' .. type(probs) .. ')', 2)
  end
  local n = #p
  if n == 0 then error('WalkerAlias: probs must not be empty', 2) end
  local total = 0
  for i = 1, n do
    local v = p[i]
    if type(v) ~= 'number' or v ~= v or v < 0 or v == math.huge then
      error(string.format('WalkerAlias: probs[%d] must be a finite non-negative number (got %s)', i - 1, tostring(v)), 2)
    end
    total = total + v
  end
  if total <= 0 then error('WalkerAlias: probs must not sum to zero', 2) end
  local scaled, small, large = {}, {}, {}
  for i = 1, n do
    scaled[i] = p[i] * n / total
    if scaled[i] < 1 then small[#small + 1] = i else large[#large + 1] = i end
  end
  local threshold, alias = {}, {}
  while #small > 0 and #large > 0 do
    local s = table.remove(small)
    local l = large[#large]
    threshold[s], alias[s] = scaled[s], l - 1
    scaled[l] = scaled[l] + scaled[s] - 1
    if scaled[l] < 1 then
      table.remove(large)
      small[#small + 1] = l
    end
  end
  -- what is left has probability 1 (up to rounding)
  for _, i in ipairs(large) do threshold[i], alias[i] = 1, i - 1 end
  for _, i in ipairs(small) do threshold[i], alias[i] = 1, i - 1 end
  self.threshold = T.array(threshold, 'float64')
  self.values = T.array(alias, 'int32')
  self.n = n
end

-- An int32 tensor of the given shape (a table or a number) of samples.
function WalkerAlias:sample(shape)
  if type(shape) == 'number' then shape = { shape } end
  if type(shape) ~= 'table' then
    error('WalkerAlias:sample: shape must be a table of sizes or a number (got ' .. type(shape) .. ')', 2)
  end
  local n = self.n
  local u = T.random.uniform(0, n, shape, 'float64')
  local col = T.minimum(T.floor(u), n - 1)
  local frac = u - col
  local idx = col:astype('int64')
  local keep = T.lt(frac, T.take(self.threshold, idx))
  local out = T.where(keep, col, T.take(self.values, idx):astype('float64'))
  return out:astype('int32')
end

-- Chainer's to_gpu/to_cpu: the tables live where the samples are drawn.
function WalkerAlias:to_device(device)
  self.threshold = self.threshold:to_device(device)
  self.values = self.values:to_device(device)
  return self
end
function WalkerAlias:to_cpu() return self:to_device(-1) end
function WalkerAlias:to_gpu(id) return self:to_device(id or 0) end

return WalkerAlias

-- chainer/_grad_bucket.lua: gradients allocated as views into one
-- contiguous, persistent buffer per dtype (a "gradient bucket", as
-- PyTorch DDP's gradient_as_bucket_view).
--
--   local bucket = GradBucket.of(model)   -- built on first use, rebuilt when stale; nil if none fits
--   bucket:take(list)                     -- the gradients into their slots: true when every one is there
--   for _, buf in ipairs(bucket.buffers) do ... end   -- {dtype =, tensor =} in place
--
-- Each initialised parameter of the model gets a slot (a view of its
-- gradient's shape into its dtype's buffer, in the model's parameter order,
-- in the raw field `_grad_slot`).  Backward (backprop.lua) then writes a
-- parameter's gradient into its slot: when the gradient was cleared the slot
-- is zeroed and the ops add into it in place (a gemm with beta = 1), when
-- it still holds the slot the new gradient is added to it (Chainer's
-- accumulation).  After backward the gradients lie packed, and chainermn's
-- mean is one in-place allreduce per buffer instead of pack, allreduce,
-- unpack.
--
-- The one visible difference from Chainer (as with PyTorch's
-- gradient_as_bucket_view): a gradient array kept from a previous step is
-- overwritten by the next backward.  A gradient the user sets to an array
-- of their own is left alone: the sum lands in the slot at the end of
-- backward (or in take).  A slot is dropped when its parameter's array
-- changes shape, dtype or device (variable.lua), and a bucket whose model
-- gained, lost or re-created parameters is rebuilt by `of`, so a stale slot
-- never receives a gradient.
local T = require 'chainer.tensor'
local meta_of = require('chainer.variable').VariableNode.meta_of

local GradBucket = {}
GradBucket.__index = GradBucket

-- models -> their bucket (weak: a bucket lives as long as its model; kept
-- off the Link so that copies and serializers never see it)
local buckets = setmetatable({}, { __mode = 'k' })

local BUCKETED = { float32 = true, float64 = true }

-- slot(p): p's slot when it fits p's array (dtype, shape, device), else nil.
function GradBucket.slot(p)
  local slot, d = rawget(p, '_grad_slot'), rawget(p, '_data')
  if slot == nil or d == nil or meta_of(slot.ptr) ~= meta_of(d.ptr) then return nil end
  return slot
end

-- The initialised parameters in the model's order.
local function initialised(model)
  local list = {}
  for _, p in model:namedparams() do
    if rawget(p, '_data') ~= nil then list[#list + 1] = p end
  end
  return list
end

-- Whether the bucket still matches the model: the same parameter objects,
-- each still owning the slot it was given, which fits its array.
function GradBucket:valid(params)
  local mine = self.params
  if #params ~= #mine then return false end
  for i = 1, #params do
    local p = params[i]
    if p ~= mine[i] or rawget(p, '_grad_slot') ~= self.slots[i] or GradBucket.slot(p) == nil then return false end
  end
  return true
end

-- A bucket for these parameters, or nil when one does not fit (an array
-- off the host, or a dtype that is not float32/float64).
local function build(params)
  local groups, index = {}, {}
  for _, p in ipairs(params) do
    local d = rawget(p, '_data')
    if d.ptr.dev >= 0 or not BUCKETED[d.dtype] then return nil end
    local g = index[d.dtype]
    if g == nil then
      g = { dtype = d.dtype, numel = 0 }
      index[d.dtype] = g
      groups[#groups + 1] = g
    end
    g.numel = g.numel + d.size
  end
  local self = setmetatable({ params = params, slots = {}, buffers = {} }, GradBucket)
  for _, g in ipairs(groups) do
    -- zeros: a slot is valid data from the start (take may read it)
    g.tensor = T.zeros({ g.numel }, g.dtype)
    g.next = g.tensor.ptr.offset
    self.buffers[#self.buffers + 1] = { dtype = g.dtype, tensor = g.tensor }
  end
  for i, p in ipairs(params) do
    local d = rawget(p, '_data')
    local g = index[d.dtype]
    local shape, strides, stride = d.shape, {}, 1
    for k = #shape, 1, -1 do
      strides[k] = stride
      stride = stride * shape[k]
    end
    local slot = g.tensor:as_strided(shape, strides, g.next)
    g.next = g.next + d.size
    rawset(p, '_grad_slot', slot)
    self.slots[i] = slot
  end
  return self
end

-- of(model): the model's bucket, built (or rebuilt) when it has none that
-- matches its parameters; nil when none fits.  Parameters that left the
-- model lose their slots.
function GradBucket.of(model)
  local params = initialised(model)
  local b = buckets[model]
  if b and b:valid(params) then return b end
  if b then
    for i, p in ipairs(b.params) do
      if rawget(p, '_grad_slot') == b.slots[i] then rawset(p, '_grad_slot', nil) end
    end
  end
  b = build(params)
  buckets[model] = b
  return b
end

-- move_buffer(i, tensor): buffer i's gradients move into `tensor` (a
-- contiguous tensor of the buffer's dtype and size, e.g. in memory shared
-- with other processes: chainermn/_shm_mean.lua): the values are copied,
-- the slots become views into it at the same offsets, and a parameter
-- whose gradient was its slot gets the new slot.
function GradBucket:move_buffer(i, tensor)
  local b = self.buffers[i]
  local old = b.tensor
  assert(tensor.dtype == b.dtype and tensor.size == old.size and tensor.is_contiguous, 'move_buffer: a different buffer')
  tensor:copy_(old)
  b.tensor = tensor
  for k, p in ipairs(self.params) do
    local slot = self.slots[k]
    if slot.dtype == b.dtype then
      local moved = tensor:as_strided(slot.shape, slot.strides, tensor.ptr.offset + slot.ptr.offset - old.ptr.offset)
      if rawget(p, '_grad_slot') == slot then rawset(p, '_grad_slot', moved) end
      if p.grad == slot then p.grad = moved end
      self.slots[k] = moved
    end
  end
end

-- take(list): list holds {param =, tensor =} for the parameters that have a
-- gradient (chainermn's entries, in the model's order).  When they are all
-- the bucket's parameters, every gradient not yet in its slot is copied
-- there and the parameter's grad becomes the slot; returns whether the
-- buffers now hold every gradient.
function GradBucket:take(list)
  local params = self.params
  if #list ~= #params then return false end
  for i = 1, #list do
    if list[i].param ~= params[i] then return false end
  end
  for i = 1, #list do
    local e, slot = list[i], self.slots[i]
    if e.tensor ~= slot then
      slot:copy_(e.tensor)
      e.param.grad = slot
      e.tensor = slot
    end
  end
  return true
end

return GradBucket

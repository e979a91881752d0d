-- chainermn/double_buffer.lua: the gradient exchange of a double-buffering
-- multi-node optimizer (create_multi_node_optimizer's double_buffering).
--
-- Each exchange packs this update's gradients into one host buffer per
-- dtype and starts their mean over the ranks with MPI_Iallreduce (the
-- reduction multi_node_mean_grad's MPI path uses: the pair mean with two
-- ranks, else the sum, times 1/size once it has arrived), then gives
-- the model the mean of the *previous* exchange's gradients, which has been
-- travelling meanwhile.  Two sets of buffers alternate: one is in flight
-- while the other is packed.  (Open MPI advances a non-blocking collective
-- inside MPI calls; with no MPI call between two updates, much of the sum
-- happens in the next exchange's wait.  The numbers are the same.)
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local mpi = require 'chainermn._mpi'
local sync = require 'chainermn.model_sync'
local GradBucket = require 'chainer._grad_bucket'

local DoubleBuffer = {}
DoubleBuffer.__index = DoubleBuffer

function DoubleBuffer.new(comm, zero_fill)
  return setmetatable({ comm = comm, zero_fill = zero_fill, sets = { {}, {} }, turn = 1, in_flight = nil },
    DoubleBuffer)
end

-- This exchange's buffer for a dtype, exactly numel long (the mean is taken
-- with a tensor op on all of it).
function DoubleBuffer:_buffer(dtype, numel)
  local set = self.sets[self.turn]
  local buf = set[dtype]
  if buf == nil or buf.size ~= numel then
    buf = T.empty({ numel }, dtype)
    set[dtype] = buf
  end
  return buf
end

-- wait(): completes the reduction in flight, if any (it is still applied by the
-- next exchange).
function DoubleBuffer:wait()
  local f = self.in_flight
  if f == nil or f.done then return end
  mpi.pending[f.requests] = nil
  f.done = true
  mpi.check(self.comm._L.MPI_Waitall(f.count, f.requests, nil), 'MPI_Waitall')
end

-- The finished reduction ({groups, requests, count}, the groups holding the
-- buffers and the parameters they came from), taken out; nil when there
-- was none.
function DoubleBuffer:_take()
  self:wait()
  local f = self.in_flight
  self.in_flight = nil
  return f
end

-- Gives every parameter the mean over the ranks of its gradient in the
-- finished exchange `f`; a parameter that had no gradient then gets none.
local function install(model, f)
  local given = {}
  for _, g in ipairs(f.groups) do
    local targets = { entries = {} }
    for i, e in ipairs(g.entries) do
      local p = e.param
      local grad = p.grad
      if grad == nil or grad.dtype ~= g.dtype or table.concat(grad.shape, ',') ~= table.concat(e.shape, ',') then
        grad = T.empty(e.shape, g.dtype)
        p.grad = grad
      end
      targets.entries[i] = { tensor = grad }
      given[p] = true
    end
    if g.scale then T.mul(g.buffer, g.scale, g.buffer) end   -- the sum over the ranks -> their mean
    sync.unpack(targets, g.buffer)
  end
  for _, p in model:namedparams() do
    if not given[p] then p.grad = nil end
  end
end

-- exchange(model): the model's gradients start travelling, and the model
-- gets the previous exchange's means (returns false, leaving the gradients
-- as they are, when there was no previous exchange).
function DoubleBuffer:exchange(model)
  local comm = self.comm
  local previous = self:_take()
  local list = sync.gradients(comm, model, self.zero_fill)   -- the same layout on every rank, or an error on all
  -- the model's gradient slots (chainer/_grad_bucket.lua): backward then
  -- writes into persistent memory instead of fresh blocks every update
  GradBucket.of(model)
  local groups = sync.by_dtype(list)
  for _, g in ipairs(groups) do
    if g.numel > 2147483647 then
      error(string.format('multi_node_mean_grad: %d %s elements are more than one MPI call moves', g.numel, g.dtype), 3)
    end
    g.buffer = self:_buffer(g.dtype, g.numel)
    sync.pack(g, g.buffer)
    local op, averaged = sync.averaging_op(comm, g.dtype)
    g.op = op
    if not averaged and comm.size > 1 then g.scale = 1 / comm.size end
    for i, e in ipairs(g.entries) do g.entries[i] = { param = e.param, shape = e.tensor.shape } end
  end
  self.turn = 3 - self.turn
  if previous then install(model, previous) end
  local requests = ffi.new('MPI_Request[?]', math.max(#groups, 1))
  for i, g in ipairs(groups) do
    mpi.check(comm._L.MPI_Iallreduce(sync.IN_PLACE, sync.pointer(g.buffer), g.numel, mpi.datatype(g.dtype),
      g.op, comm._comm, requests + (i - 1)), 'MPI_Iallreduce')
  end
  self.in_flight = { groups = groups, requests = requests, count = #groups }
  mpi.pending[requests] = { count = #groups, buffers = groups }
  return previous ~= nil
end

-- discard(): completes the reduction in flight and forgets it (the model is
-- about to be broadcast, as after a change of its parameters).
function DoubleBuffer:discard() self:_take() end

return DoubleBuffer

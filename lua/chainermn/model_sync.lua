-- chainermn/model_sync.lua: the model-level collectives of a communicator.
--
--   bcast_data(comm, model)                   root 0's parameters on every rank
--   multi_node_mean_grad(comm, model, opts)   every gradient := its mean over ranks
--
-- Parameters are taken in Chainer's order (sorted names).  A 'flat'
-- communicator packs them into one host buffer per dtype and makes one MPI
-- call per dtype; a 'naive' one makes one call per parameter.  Before any
-- transfer the ranks check that they hold the same layout (names, dtypes,
-- shapes), so different models are an error on every rank, not a hang.
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local mpi = require 'chainermn._mpi'
local GradBucket = require 'chainer._grad_bucket'
local SharedMean = require 'chainermn._shm_mean'

local M = {}

local BYTES_PER_ELEMENT = { float16 = 2, bool = 1 }

-- entries(model, field, zero_fill): {name, param, tensor} for every
-- initialised parameter whose `field` ('data' or 'grad') is present
-- (zero_fill: a missing gradient becomes zeros, so it takes part).
local function entries(model, field, zero_fill)
  local list = {}
  for name, p in model:namedparams() do
    local t = field == 'data' and p.array or p.grad
    if t == nil and zero_fill then
      local slot = GradBucket.slot(p)
      if slot then slot:fill_(0) end
      p.grad = slot or T.zeros_like(p.array)
      t = p.grad
    end
    if t ~= nil then list[#list + 1] = { name = name, param = p, tensor = t } end
  end
  return list
end

-- The layout as integers (for the cheap agreement) and as text (for the
-- error message, gathered only when the ranks disagree).
local function layout(list)
  local sig, text, hash = { #list }, {}, 0
  for i, e in ipairs(list) do
    local t = e.tensor
    -- a position-weighted checksum of names, dtypes and shapes
    local s = e.name .. ':' .. t.dtype .. ':' .. table.concat(t.shape, 'x') .. '@' .. t.device
    for j = 1, #s do hash = (hash * 31 + s:byte(j) + i) % 2147483647 end
    text[i] = s
  end
  sig[2] = hash
  local desc = #list .. ' parameters'
  if #list > 0 then desc = desc .. ' (' .. table.concat(text, ', ') .. ')' end
  return sig, desc
end

local function check_cpu(list, fn)
  for _, e in ipairs(list) do
    if e.tensor.ptr.dev >= 0 then
      error(string.format('%s: parameter %s is on %s; chainermn moves host memory only for now ' ..
        '(call model:to_cpu(), or see docs/chainermn.md)', fn, e.name, e.tensor.device), 3)
    end
    if not mpi.summable(e.tensor.dtype) and fn == 'multi_node_mean_grad' then
      error(string.format('%s: parameter %s has a %s gradient (expected float32 or float64)', fn, e.name,
        e.tensor.dtype), 3)
    end
  end
end

local function pointer(t) return ffi.cast('char *', t.ptr.data) + t.ptr.offset * t.itemsize end

-- Groups the entries by dtype, in first-seen order: {dtype, entries, numel}.
local function by_dtype(list)
  local groups, index = {}, {}
  for _, e in ipairs(list) do
    local d = e.tensor.dtype
    if not index[d] then
      index[d] = #groups + 1
      groups[#groups + 1] = { dtype = d, entries = {}, numel = 0 }
    end
    local g = groups[index[d]]
    g.entries[#g.entries + 1] = e
    g.numel = g.numel + e.tensor.size
  end
  return groups
end

-- Copies between the tensors and one packed buffer (contiguous CPU tensors
-- are copied byte for byte; others through a contiguous copy).  pack's
-- `scale`, when given, multiplies on the way in: the copy and the scaling
-- are one pass over the gradients instead of two.
local function pack(group, buf, scale)
  local dst, off = pointer(buf), 0
  for _, e in ipairs(group.entries) do
    local t = e.tensor
    if scale then
      local n = t.size
      T.mul(t, scale, buf:as_strided({ n }, { 1 }, buf.ptr.offset + off / t.itemsize):view(t.shape))
    else
      t = t.is_contiguous and t or t:contiguous()
      ffi.copy(dst + off, pointer(t), t.nbytes)
    end
    off = off + t.nbytes
  end
end
local function unpack(group, buf)
  local src, off = pointer(buf), 0
  for _, e in ipairs(group.entries) do
    local t = e.tensor
    if t.is_contiguous then
      ffi.copy(pointer(t), src + off, t.nbytes)
    else
      local tmp = T.empty(t.shape, t.dtype)
      ffi.copy(pointer(tmp), src + off, t.nbytes)
      t:copy_(tmp)
    end
    off = off + t.nbytes
  end
end

-- The communicator's packing buffer for `dtype`, at least `numel` long,
-- kept between calls (as ChainerMN's flat communicator keeps its buffers):
-- a fresh buffer at every update would cost an allocation and a page fault
-- per 4 KiB of gradients.
local function packing_buffer(comm, dtype, numel)
  comm._buffers = comm._buffers or {}
  local buf = comm._buffers[dtype]
  if buf == nil or buf.size ~= numel then   -- exactly numel: `after` runs tensor ops on all of it
    buf = T.empty({ numel }, dtype)
    comm._buffers[dtype] = buf
  end
  return buf
end

-- Runs `transfer(ptr, count, dtype)` on every parameter tensor, packed into
-- one buffer per dtype (flat) or one by one (naive).  `scale_of(dtype)` (nil
-- or a function giving a number or nil) multiplies every value: on the way
-- into the packed buffer, or in place after the transfer of an unpacked one.
local function each_buffer(fn, comm, list, transfer, scale_of)
  if comm._pack then
    for _, g in ipairs(by_dtype(list)) do
      local scale = scale_of and scale_of(g.dtype)
      if g.numel > 2147483647 then   -- the same layout on every rank: all raise here
        error(string.format('%s: %d %s elements are more than one MPI call moves', fn, g.numel, g.dtype), 4)
      end
      local buf = packing_buffer(comm, g.dtype, g.numel)
      pack(g, buf, scale)
      transfer(pointer(buf), g.numel, g.dtype)
      unpack(g, buf)
    end
  else
    for _, e in ipairs(list) do
      local g = { entries = { e } }
      local t = e.tensor.is_contiguous and e.tensor or e.tensor:contiguous()
      transfer(pointer(t), t.size, t.dtype)
      local scale = scale_of and scale_of(t.dtype)
      if scale then T.mul(t, scale, t) end
      if t ~= e.tensor then unpack(g, t) end
    end
  end
end

-- bcast_data(comm, model): rank 0's parameter values on every rank.
function M.bcast_data(comm, model)
  if type(model) ~= 'table' or model._is_link ~= true then
    error('bcast_data: expected a chainer.Link (got ' .. type(model) .. ')', 3)
  end
  local list = entries(model, 'data')
  comm:_agree('bcast_data', layout(list))   -- first: then every rank passes or fails check_cpu alike
  check_cpu(list, 'bcast_data')
  local L = comm._L
  each_buffer('bcast_data', comm, list, function(ptr, count, dtype)
    local datatype = mpi.datatype(dtype)
    if not mpi.summable(dtype) then count = count * BYTES_PER_ELEMENT[dtype] end   -- sent as bytes
    mpi.check(L.MPI_Bcast(ptr, count, datatype, 0, comm._comm), 'MPI_Bcast')
  end)
end

local IN_PLACE = ffi.cast('void *', 1)   -- MPI_IN_PLACE in Open MPI's mpi.h
M.IN_PLACE = IN_PLACE

-- The 'hierarchical' communicator's reduction (op: a sum or the pair mean),
-- in place: the ranks of each node reduce to their leader (intra_rank 0),
-- the leaders allreduce among the nodes, and each leader broadcasts the
-- total to its node.  Within a node the messages go through shared memory
-- and only one per node crosses the network.
local function hierarchical_reduce(comm, ptr, count, datatype, op)
  local L, intra, leaders = comm._L, comm._intra[0], comm._leaders[0]
  local is_leader = comm.intra_rank == 0
  mpi.check(L.MPI_Reduce(is_leader and IN_PLACE or ptr, is_leader and ptr or nil, count, datatype, op, 0, intra),
    'MPI_Reduce')
  if is_leader then
    mpi.check(L.MPI_Allreduce(IN_PLACE, ptr, count, datatype, op, leaders), 'MPI_Allreduce')
  end
  mpi.check(L.MPI_Bcast(ptr, count, datatype, 0, intra), 'MPI_Bcast')
end

-- averaging_op(comm, dtype): the MPI_Op that averages, and whether it does
-- so by itself.  With two ranks every element is combined exactly once (in
-- any algorithm, hierarchical included), so the pair-mean operator gives the
-- mean in the sum's own pass, with the bits of the sum halved; otherwise
-- MPI_SUM, and the caller multiplies by 1/size.  Every rank of a
-- communicator makes the same choice, so the ops of one collective agree.
local function averaging_op(comm, dtype)
  if comm.size == 2 then
    local op = mpi.pair_mean_op(dtype)
    if op then return op, true end
  end
  return mpi.op('sum'), false
end

-- reduce_in_place(comm, ptr, count, dtype, op): the buffer := op over the ranks.
local function reduce_in_place(comm, ptr, count, dtype, op)
  local datatype = mpi.datatype(dtype)
  if comm._intra then
    hierarchical_reduce(comm, ptr, count, datatype, op)
  else
    mpi.check(comm._L.MPI_Allreduce(IN_PLACE, ptr, count, datatype, op, comm._comm), 'MPI_Allreduce')
  end
end

-- gradients(comm, model, zero_fill): the gradient entries {name, param,
-- tensor} of the model, once every rank has checked that all ranks hold the
-- same layout of host float gradients (an error on every rank otherwise).
function M.gradients(comm, model, zero_fill)
  if type(model) ~= 'table' or model._is_link ~= true then
    error('multi_node_mean_grad: expected a chainer.Link (got ' .. type(model) .. ')', 4)
  end
  local list = entries(model, 'grad', zero_fill)
  comm:_agree('multi_node_mean_grad', layout(list))
  check_cpu(list, 'multi_node_mean_grad')
  return list
end

-- The packing helpers, for the double-buffering optimizer's own buffers.
M.by_dtype, M.pack, M.unpack, M.pointer = by_dtype, pack, unpack, pointer
-- and the parameter lists and their layout, for device models (chainermn/device_sync.lua)
M.entries, M.layout = entries, layout

-- The layout of a bucket's gradients (signature and description, as
-- `layout` makes them for the same gradients), computed once per bucket:
-- weak keys, so it goes with its bucket.
local bucket_layouts = setmetatable({}, { __mode = 'k' })
local function bucket_layout(bucket, model)
  local cached = bucket_layouts[bucket]
  if cached == nil then
    local list, params, i = {}, bucket.params, 0
    for name, p in model:namedparams() do
      if rawget(p, '_data') ~= nil then
        i = i + 1
        if params[i] ~= p then return nil end   -- not the bucket's order: no shortcut
        list[i] = { name = name, tensor = bucket.slots[i] }
      end
    end
    if i ~= #params then return nil end
    local sig, desc = layout(list)
    cached = { sig = sig, desc = desc }
    bucket_layouts[bucket] = cached
  end
  return cached
end

local function fits(g, slot)
  if g.dtype ~= slot.dtype or g.ptr.dev >= 0 or #g.shape ~= #slot.shape then return false end
  for k = 1, #g.shape do
    if g.shape[k] ~= slot.shape[k] then return false end
  end
  return true
end

-- into_slots(bucket, zero_fill): when every parameter of the bucket has a
-- gradient of its slot's dtype and shape on the host (or none, with
-- zero_fill), the gradients not yet in their slots are copied there (a
-- missing one is zeroed there) and true is returned: the layout is then the
-- bucket's.  Otherwise false, with nothing changed.
local function into_slots(bucket, zero_fill)
  local params, slots = bucket.params, bucket.slots
  for i = 1, #params do
    local g = params[i].grad
    if g == nil then
      if not zero_fill then return false end
    elseif g ~= slots[i] and not fits(g, slots[i]) then
      return false
    end
  end
  for i = 1, #params do
    local p, slot = params[i], slots[i]
    local g = p.grad
    if g ~= slot then
      if g == nil then slot:fill_(0) else slot:copy_(g) end
      p.grad = slot
    end
  end
  return true
end

-- mpi_mean(comm, b): bucket buffer b := its mean over the ranks, in place,
-- with one MPI call (with two ranks nothing else; otherwise the sum, then
-- times 1/size).
local function mpi_mean(comm, b)
  local buf = b.tensor
  if buf.size > 2147483647 then   -- the same layout on every rank: all raise here
    error(string.format('multi_node_mean_grad: %d %s elements are more than one MPI call moves', buf.size,
      b.dtype), 5)
  end
  local op, averaged = averaging_op(comm, b.dtype)
  reduce_in_place(comm, pointer(buf), buf.size, b.dtype, op)
  if not averaged and comm.size > 1 then T.mul(buf, 1 / comm.size, buf) end
end

-- mean_buffers(comm, bucket, shared): every buffer of the bucket := its
-- mean over the ranks, in place: through shared memory when all ranks share
-- a node (`shared`, chainermn/_shm_mean.lua; the same bits as MPI with two
-- ranks), else through MPI.
local function mean_buffers(comm, bucket, shared)
  for i, b in ipairs(bucket.buffers) do
    if not (shared and shared:mean(bucket, i)) then mpi_mean(comm, b) end
  end
end

-- multi_node_mean_grad(comm, model, zero_fill): every gradient becomes its
-- mean over the ranks.
--
-- The training path (flat, hierarchical): the model's gradient bucket
-- (chainer/_grad_bucket.lua) holds the gradients, written there by
-- backward, so the mean is one in-place reduction per dtype.  The layout
-- check is then one small collective of the bucket's signature, computed
-- when the bucket was built (the agreement makes a rank whose model differs
-- an error on every rank, before any data moves).
--
-- Otherwise (naive, no bucket, gradients that do not fit the slots): the
-- layout is computed and agreed on from the gradients themselves; packed,
-- each gradient goes into the communicator's buffer (times 1/size on the way
-- in unless the reduction averages), is reduced in place and copied back;
-- unpacked (naive), each is reduced in place and scaled, as ChainerMN's
-- `recvbuf *= 1.0 / size`.  With a power-of-two size every path gives the
-- same bits.
function M.multi_node_mean_grad(comm, model, zero_fill)
  if type(model) ~= 'table' or model._is_link ~= true then
    error('multi_node_mean_grad: expected a chainer.Link (got ' .. type(model) .. ')', 3)
  end
  local shared = SharedMean.of(comm)   -- nil: the mean goes through MPI
  if comm._pack then
    local bucket = GradBucket.of(model)
    local cached = bucket and bucket_layout(bucket, model)
    if cached and into_slots(bucket, zero_fill) then
      comm:_agree('multi_node_mean_grad', cached.sig, cached.desc)
      mean_buffers(comm, bucket, shared)
      return
    end
  end
  local list = M.gradients(comm, model, zero_fill)
  -- the bucket, built here on the first call: from the next backward on the
  -- gradients are written into its slots instead of fresh blocks
  local bucket = GradBucket.of(model)
  if comm._pack and bucket and bucket:take(list) then
    mean_buffers(comm, bucket, shared)   -- the same layout on every rank (checked): all take this path
    return
  end
  each_buffer('multi_node_mean_grad', comm, list, function(ptr, count, dtype)
    reduce_in_place(comm, ptr, count, dtype, (averaging_op(comm, dtype)))
  end, function(dtype)
    local _, averaged = averaging_op(comm, dtype)
    if not averaged then return 1 / comm.size end
  end)
end

-- The reduction the mean uses (the double-buffering optimizer's too).
M.averaging_op = averaging_op

return M

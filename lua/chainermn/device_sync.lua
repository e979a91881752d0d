-- chainermn/device_sync.lua: bcast_data and multi_node_mean_grad for models
-- whose arrays are on a GPU (host models go through model_sync.lua).
--
-- The arrays are packed, on their device, into one buffer per dtype (kept
-- by the communicator between calls), and each buffer moves in one call:
--   * 'pure_nccl': ncclAllReduce / ncclBroadcast over one NCCL communicator
--     per rank, on the rank's device (comm.intra_rank), made when the
--     communicator is created (rank 0's NCCL id sent with MPI).  Queued on
--     the device: nothing waits for it, and the next kernels follow it.
--   * the MPI communicators, when Open MPI is CUDA-aware (its
--     MPIX_Query_cuda_support(), looked up at run time, says 1): MPI on the
--     device buffer itself, after the device has finished packing it;
--   * otherwise host-staged: the packed buffer copied to the host, MPI on
--     host memory, and copied back.
-- Means are sums times 1/size on the device.  Before any transfer the ranks
-- check that they hold the same layout (names, dtypes, shapes), so
-- different models are an error on every rank, as on the host.
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local mpi = require 'chainermn._mpi'
local sync = require 'chainermn.model_sync'

local M = {}

-- on_device(model): true when the model has an array on a GPU.
function M.on_device(model)
  if type(model) ~= 'table' or model._is_link ~= true then return false end
  for p in model:params() do
    local a = p.array
    if a ~= nil and a.ptr.dev >= 0 then return true end
  end
  return false
end

-- nccl_ready(): true when this process can use NCCL (a GPU and the
-- library); false and why otherwise.
function M.nccl_ready()
  local cuda = require 'chainer.cuda'
  if not cuda.available then return false, 'no GPU: ' .. cuda.info() end
  return require('chainer.cuda.nccl').available()
end

-- attach_nccl(comm): comm's NCCL communicator over its ranks, on device
-- comm.intra_rank (ChainerMN's one GPU per process).
function M.attach_nccl(comm)
  local nccl = require 'chainer.cuda.nccl'
  local n = require('chainer.cuda').device_count()
  local ok = comm.intra_rank < n
  -- every rank learns whether every rank has its device, so all raise together
  if not comm:_same_everywhere({ ok and 1 or 0, 1 }) or not ok then
    error(string.format("'pure_nccl' uses one GPU per process, cuda:<intra_rank>: a rank of this job has no such " ..
      'device (this is rank %d, intra_rank %d, %d GPU%s here)', comm.rank, comm.intra_rank, n, n == 1 and '' or 's'), 0)
  end
  local id = comm:bcast_obj(comm.rank == 0 and nccl.get_unique_id() or nil, 0)
  comm._nccl = nccl.NcclCommunicator(comm.size, id, comm.rank, comm.intra_rank)
  comm.device = comm.intra_rank
end

-- cuda_aware(): whether Open MPI can read and write device memory itself.
local cuda_aware_answer
function M.cuda_aware()
  if cuda_aware_answer == nil then
    pcall(ffi.cdef, 'int MPIX_Query_cuda_support(void);')
    local ok, v = pcall(function() return mpi.lib().MPIX_Query_cuda_support() end)
    cuda_aware_answer = ok and v == 1
  end
  return cuda_aware_answer
end

-- The device of the list's tensors; an error naming a parameter elsewhere.
-- (A model on the host runs the same packing and staging: the 2-rank specs
-- check this file's arithmetic that way, without a GPU.)
local function device_of(list, fn)
  local dev = list[1] and list[1].tensor.ptr.dev
  for _, e in ipairs(list) do
    local d = e.tensor.ptr.dev
    if d ~= dev then
      error(string.format('%s: parameter %s is on %s but %s is on %s (a model on one GPU, please)', fn, e.name,
        e.tensor.device, list[1].name, list[1].tensor.device), 4)
    end
  end
  return dev
end

-- The layout check of model_sync, without the devices (each rank has its own).
local function agree(comm, fn, list)
  local plain = {}
  for i, e in ipairs(list) do
    plain[i] = { name = e.name, tensor = { dtype = e.tensor.dtype, shape = e.tensor.shape, device = 'gpu' } }
  end
  local sig, desc = sync.layout(plain)
  comm:_agree(fn, sig, desc)
end

-- The communicator's packing buffer on `dev` for `dtype`, numel long.
local function device_buffer(comm, dev, dtype, numel)
  comm._device_buffers = comm._device_buffers or {}
  local key = dtype .. '@' .. dev
  local buf = comm._device_buffers[key]
  if buf == nil or buf.size ~= numel then
    buf = T.empty({ numel }, dtype, dev)
    comm._device_buffers[key] = buf
  end
  return buf
end

-- The views of buf that hold the group's tensors, in order.
local function slices(group, buf)
  local out, off = {}, 0
  for i, e in ipairs(group.entries) do
    local n = e.tensor.size
    out[i] = buf:as_strided({ n }, { 1 }, buf.ptr.offset + off):view(e.tensor.shape)
    off = off + n
  end
  return out
end

-- Moves every group of `list` through `transfer(buf, group)` packed.
local function each_group(comm, dev, list, transfer)
  for _, g in ipairs(sync.by_dtype(list)) do
    if g.numel > 2147483647 then   -- the same layout on every rank: all raise here
      error(string.format('%d %s elements are more than one call moves', g.numel, g.dtype), 0)
    end
    local buf = device_buffer(comm, dev, g.dtype, g.numel)
    local views = slices(g, buf)
    for i, e in ipairs(g.entries) do views[i]:copy_(e.tensor) end
    transfer(buf, g)
    for i, e in ipairs(g.entries) do e.tensor:copy_(views[i]) end
  end
end

local function pointer(t) return ffi.cast('char *', t.ptr.data) + t.ptr.offset * t.itemsize end

-- One MPI collective on a packed device buffer: on the buffer itself
-- (CUDA-aware) or through a host copy.  call(ptr) makes the MPI call.
local function mpi_on(buf, call)
  if buf.ptr.dev >= 0 and M.cuda_aware() then
    require('chainer.cuda').synchronize(buf.ptr.dev)   -- MPI reads what the kernels wrote
    call(pointer(buf))
  else
    local host = buf.ptr.dev >= 0 and buf:to_cpu() or buf:copy()
    call(pointer(host))
    buf:copy_(host)
  end
end

local function byte_count(buf)
  if mpi.summable(buf.dtype) then return buf.size, mpi.datatype(buf.dtype) end
  return buf.size * buf.itemsize, mpi.byte()
end

-- bcast_data(comm, model): rank 0's parameter values on every rank.
function M.bcast_data(comm, model)
  local fn = 'bcast_data'
  local list = sync.entries(model, 'data')
  agree(comm, fn, list)
  if #list == 0 then return end
  local dev = device_of(list, fn)
  each_group(comm, dev, list, function(buf)
    if comm._nccl then
      comm._nccl:bcast(buf, buf, 0)
    else
      local count, datatype = byte_count(buf)
      mpi_on(buf, function(ptr) mpi.check(comm._L.MPI_Bcast(ptr, count, datatype, 0, comm._comm), 'MPI_Bcast') end)
    end
  end)
end

-- multi_node_mean_grad(comm, model, zero_fill): every gradient := its mean
-- over the ranks.
function M.multi_node_mean_grad(comm, model, zero_fill)
  local fn = 'multi_node_mean_grad'
  local list = sync.entries(model, 'grad', zero_fill)
  agree(comm, fn, list)
  for _, e in ipairs(list) do
    if e.tensor.dtype ~= 'float32' and e.tensor.dtype ~= 'float64' and e.tensor.dtype ~= 'float16' then
      error(string.format('%s: parameter %s has a %s gradient (expected a float dtype)', fn, e.name,
        e.tensor.dtype), 3)
    end
  end
  if #list == 0 then return end
  local dev = device_of(list, fn)
  each_group(comm, dev, list, function(buf)
    if comm._nccl then
      comm._nccl:all_reduce(buf, buf, 'sum')
    else
      if not mpi.summable(buf.dtype) then
        error(string.format('%s: MPI cannot sum %s gradients (use float32 or float64, or pure_nccl)', fn, buf.dtype), 0)
      end
      mpi_on(buf, function(ptr)
        mpi.check(comm._L.MPI_Allreduce(sync.IN_PLACE, ptr, buf.size, mpi.datatype(buf.dtype), mpi.op('sum'),
          comm._comm), 'MPI_Allreduce')
      end)
    end
    if comm.size > 1 then T.mul(buf, 1 / comm.size, buf) end
  end)
end

return M

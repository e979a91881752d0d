-- bench/mpi_allreduce.lua: chainermn's comm:allreduce(t) (float32 sum, a
-- new result tensor freed at once, the mismatch agreement included) and
-- comm:multi_node_mean_grad(model) (the training path) against a plain
-- MPI_Allreduce on preallocated buffers made through the FFI in the same
-- process, 1 KiB to 64 MiB.  The two alternate, repetition by repetition,
-- so that all see the same load on a shared machine; each column is the
-- best of the repetitions (the least disturbed).  bench/mpi_allreduce_c.c
-- is the same plain MPI_Allreduce from a C program; bench/mpi_allreduce.sh
-- runs both.
--   mpirun -np 2 chainlua bench/mpi_allreduce.lua [communicator]
local ffi = require 'ffi'
local chainer = require 'chainer'
local chainermn = require 'chainermn'
local mpi = require 'chainermn._mpi'
local T = require 'chainer.tensor'
local now = require('chainer.training._util').now

local comm = chainermn.create_communicator(arg[1] or 'flat')
local REPEATS = 9

local function pointer(t) return ffi.cast('char *', t.ptr.data) + t.ptr.offset * t.itemsize end

-- seconds per call of f, over `inner` calls started together on every rank
local function per_call(f, inner)
  comm:barrier()
  local t0 = now()
  for _ = 1, inner do f() end
  return (now() - t0) / inner
end

if comm.rank == 0 then
  print(string.format('%10s %16s %16s %7s %16s %7s', 'bytes', 'MPI_Allreduce', 'comm:allreduce', 'ratio',
    'mean_grad', 'ratio'))
end
local bytes = 1024
while bytes <= 64 * 2 ^ 20 do
  local n = bytes / 4
  local x = T.arange(0, n, 1, 'float32') % 7
  local out = T.empty({ n }, 'float32')
  local L, F32, SUM = comm._L, mpi.datatype('float32'), mpi.op('sum')
  local function raw() L.MPI_Allreduce(pointer(x), pointer(out), n, F32, SUM, comm._comm) end
  -- the result is freed at once: left to the collector, 1 MiB results pile
  -- up between collections and each call gets a fresh block from the
  -- system instead of the runtime's block cache (bench/README.md)
  local function chainlua() comm:allreduce(x):free() end
  -- the training path: a model whose one parameter has n elements, its
  -- gradient averaged in place (flat: packed, summed, divided, unpacked)
  local link = chainer.Link()
  link:add_param('w', { n }, 'float32')
  link.w.grad = x:copy()
  local function mean_grad() comm:multi_node_mean_grad(link) end
  -- warm up, then size the inner loop for ~20 ms of the slowest (rank 0 decides)
  for _ = 1, 3 do raw(); chainlua(); mean_grad() end
  local one = math.max(per_call(raw, 3), per_call(chainlua, 3), per_call(mean_grad, 3))
  local inner = comm:bcast_obj(math.max(1, math.min(2000, math.floor(0.02 / math.max(one, 1e-9)))), 0)
  local best_raw, best_chainlua, best_mean = math.huge, math.huge, math.huge
  for _ = 1, REPEATS do
    best_raw = math.min(best_raw, per_call(raw, inner))
    best_chainlua = math.min(best_chainlua, per_call(chainlua, inner))
    best_mean = math.min(best_mean, per_call(mean_grad, inner))
    collectgarbage('step', 0)   -- free the results between repetitions, outside the timing
  end
  if comm.rank == 0 then
    io.write(string.format('%10d %11.1f MB/s %11.1f MB/s %7.2f %11.1f MB/s %7.2f\n', bytes, bytes / best_raw / 1e6,
      bytes / best_chainlua / 1e6, best_raw / best_chainlua, bytes / best_mean / 1e6, best_raw / best_mean))
    io.flush()
  end
  bytes = bytes * 4
end

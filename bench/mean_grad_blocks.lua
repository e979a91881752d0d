-- bench/mean_grad_blocks.lua: comm:multi_node_mean_grad(model) against a
-- plain in-place MPI_Allreduce of the same bucket buffer (MPI_SUM, and the
-- pair-mean operator the two-rank mean uses), in blocks of 200 calls each
-- (median per call, rank 0), three rounds, at 1, 4 and 16 MiB (BENCH_MIB=n:
-- n MiB only); the mean both through shared memory and through MPI
-- (comm.mean_grad_via, chainermn/_shm_mean.lua):
--   OMP_NUM_THREADS=1 mpirun -np 2 chainlua bench/mean_grad_blocks.lua
-- Blocks rather than bench/mean_grad_phases.lua's call-by-call alternation:
-- there each phase inherits the cache state the previous one left, which
-- moves a 1-4 MiB allreduce by more than the mean's own work.
local ffi = require 'ffi'
local chainer = require 'chainer'
local chainermn = require 'chainermn'
local mpi = require 'chainermn._mpi'
local model_sync = require 'chainermn.model_sync'
local GradBucket = require 'chainer._grad_bucket'
local T = require 'chainer.tensor'
local now = require('chainer.training._util').now
local comm = chainermn.create_communicator('flat')
local SIZES = os.getenv('BENCH_MIB') and { tonumber(os.getenv('BENCH_MIB')) } or { 1, 4, 16 }
for _, mib in ipairs(SIZES) do
local n = mib * 2^20 / 4
local link = chainer.Link()
link:add_param('w', { n - 1000 }, 'float32')
link:add_param('b', { 1000 }, 'float32')
link.w.grad = T.ones({ n - 1000 }, 'float32')
link.b.grad = T.ones({ 1000 }, 'float32')
comm:multi_node_mean_grad(link)
local buf = GradBucket.of(link).buffers[1].tensor
local function pointer(t) return ffi.cast('char *', t.ptr.data) + t.ptr.offset * t.itemsize end
local pair = mpi.pair_mean_op('float32')
local F32 = mpi.datatype('float32')
local function med(f)
  local ts = {}
  for i = 1, 200 do comm:barrier(); local t0 = now(); f(); ts[#ts+1] = now() - t0 end
  table.sort(ts); return ts[100] * 1e6
end
for r = 1, 3 do
  comm.mean_grad_via = 'mpi'
  local a = med(function() comm:multi_node_mean_grad(link) end)
  comm.mean_grad_via = 'shm'
  local s = med(function() comm:multi_node_mean_grad(link) end)
  local b = med(function() comm._L.MPI_Allreduce(model_sync.IN_PLACE, pointer(buf), n, F32, pair, comm._comm) end)
  local c = med(function() comm._L.MPI_Allreduce(model_sync.IN_PLACE, pointer(buf), n, F32, mpi.op('sum'), comm._comm) end)
  if comm.rank == 0 then print(string.format('%2d MiB round %d: mean_grad via shm %.0f us, via mpi %.0f us, MPI_Allreduce(pair mean) %.0f us, MPI_Allreduce(MPI_SUM) %.0f us, ratio sum/mean_grad(mpi) %.2f', mib, r, s, a, b, c, c / a)) end
end
end

-- bench/mean_grad_phases.lua: where comm:multi_node_mean_grad(model)'s time
-- goes, phase by phase, against a plain MPI_Allreduce of the same buffer.
--   mpirun -np 2 chainlua bench/mean_grad_phases.lua [communicator] [MiB ...]
-- Each phase of the flat path is run on its own, in the order the call runs
-- them, many times; every column is the median (and min) per call, wall
-- time, rank 0's view.  Phases: `check` (GradBucket.of's walk and the
-- agreement on a signature), `agree` (the agreement's collective alone),
-- `sum` (MPI_Allreduce in place on the bucket), `scale` (the 1/size pass the
-- sum needs), `pair_mean` (MPI_Allreduce with the pair-mean operator, which
-- averages in the sum's pass; 2 ranks), `whole` (comm:multi_node_mean_grad),
-- `raw` (MPI_Allreduce of a separate buffer of the same size).
-- MEAN_GRAD_BEFORE=path/to/an/older/model_sync.lua adds `before`: that
-- file's multi_node_mean_grad on the same model, alternating with the rest
-- (an A/B in one process: e.g. main's lua/chainermn/model_sync.lua).
local ffi = require 'ffi'
local chainer = require 'chainer'
local chainermn = require 'chainermn'
local mpi = require 'chainermn._mpi'
local model_sync = require 'chainermn.model_sync'
local GradBucket = require 'chainer._grad_bucket'
local T = require 'chainer.tensor'
local now = require('chainer.training._util').now

local comm = chainermn.create_communicator(arg[1] or 'flat')
local sizes = {}
for i = 2, #arg do sizes[#sizes + 1] = tonumber(arg[i]) end
if #sizes == 0 then sizes = { 1, 4, 16 } end
local CALLS = 200
local before = os.getenv('MEAN_GRAD_BEFORE')
before = before and before ~= '' and assert(loadfile(before))() or nil

local function pointer(t) return ffi.cast('char *', t.ptr.data) + t.ptr.offset * t.itemsize end
local L, F32, SUM = comm._L, mpi.datatype('float32'), mpi.op('sum')

local function stats(xs)
  table.sort(xs)
  return xs[math.floor((#xs + 1) / 2)], xs[1]
end

if comm.rank == 0 then
  print(string.format('%6s %-10s %12s %12s   (us per call, rank 0, %d calls each)', 'MiB', 'phase', 'median', 'min',
    CALLS))
end
for _, mib in ipairs(sizes) do
  local n = mib * 2 ^ 20 / 4
  local link = chainer.Link()
  -- the MNIST example's shapes scaled to n elements: a few parameters
  link:add_param('w', { n - 1000 }, 'float32')
  link:add_param('b', { 1000 }, 'float32')
  link.w.grad = T.ones({ n - 1000 }, 'float32')
  link.b.grad = T.ones({ 1000 }, 'float32')
  comm:multi_node_mean_grad(link)   -- builds the bucket
  local bucket = GradBucket.of(link)
  local buf = bucket.buffers[1].tensor
  local other = T.ones({ n }, 'float32')
  local pair = mpi.pair_mean_op('float32')
  local phases = {
    -- the per-call layout check: the walk, the slots and the agreement
    { 'check', function()
      local b = GradBucket.of(link)
      comm:_agree('bench', { #b.params, 12345 }, 'x')
    end },
    { 'agree', function() comm:_same_everywhere({ 2, 12345 }) end },   -- the collective alone
    { 'sum', function() L.MPI_Allreduce(model_sync.IN_PLACE, pointer(buf), n, F32, SUM, comm._comm) end },
    { 'scale', function() T.mul(buf, 0.5, buf) end },
    { 'pair_mean', function()
      if pair then L.MPI_Allreduce(model_sync.IN_PLACE, pointer(buf), n, F32, pair, comm._comm) end
    end },
    { 'whole', function() comm:multi_node_mean_grad(link) end },
    { 'raw', function() L.MPI_Allreduce(model_sync.IN_PLACE, pointer(other), n, F32, SUM, comm._comm) end },
  }
  if before then phases[#phases + 1] = { 'before', function() before.multi_node_mean_grad(comm, link) end } end
  local times = {}
  for _, ph in ipairs(phases) do times[ph[1]] = {} end
  for _ = 1, CALLS do   -- phases alternate call by call: all see the same load
    for _, ph in ipairs(phases) do
      comm:barrier()
      local t0 = now()
      ph[2]()
      local dt = now() - t0
      table.insert(times[ph[1]], dt)
    end
    buf:fill_(1); other:fill_(1)
  end
  if comm.rank == 0 then
    for _, ph in ipairs(phases) do
      local med, min = stats(times[ph[1]])
      print(string.format('%6g %-10s %12.1f %12.1f', mib, ph[1], med * 1e6, min * 1e6))
    end
    io.flush()
  end
end

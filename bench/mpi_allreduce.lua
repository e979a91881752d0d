-- bench/mpi_allreduce.lua: chainermn's comm:allreduce(t) (float32 sum, a
-- new result tensor, the mismatch agreement included) from 1 KiB to
-- 64 MiB, in the format of bench/mpi_allreduce_c.c (Open MPI's own
-- MPI_Allreduce from C).  Run both with bench/mpi_allreduce.sh.
--   mpirun -np 2 chainlua bench/mpi_allreduce.lua [communicator]
local chainermn = require 'chainermn'
local T = require 'chainer.tensor'
local now = require('chainer.training._util').now

local comm = chainermn.create_communicator(arg[1] or 'flat')
local REPEATS = 7

local bytes = 1024
while bytes <= 64 * 2 ^ 20 do
  local x = T.arange(0, bytes / 4, 1, 'float32') % 7
  -- warm up (JIT, first-touch pages), then time 3 calls to size the inner
  -- loop: enough calls for ~50 ms at this size (rank 0 decides)
  for _ = 1, 3 do comm:allreduce(x) end
  comm:barrier()
  local t0 = now()
  for _ = 1, 3 do comm:allreduce(x) end
  local one = (now() - t0) / 3
  local inner = comm:bcast_obj(math.max(1, math.min(2000, math.floor(0.05 / math.max(one, 1e-9)))), 0)
  local per_call = {}
  for r = 1, REPEATS do
    comm:barrier()
    t0 = now()
    for _ = 1, inner do comm:allreduce(x) end
    per_call[r] = (now() - t0) / inner
  end
  table.sort(per_call)
  local median = per_call[math.floor(REPEATS / 2) + 1]
  if comm.rank == 0 then
    io.write(string.format('bytes %d median_s %.9f MB/s %.1f calls %d\n', bytes, median, bytes / median / 1e6,
      inner))
    io.flush()
  end
  bytes = bytes * 4
end

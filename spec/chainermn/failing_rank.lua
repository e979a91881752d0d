-- Started by chainermn_spec.lua under `mpirun -np 2` with the chainlua
-- executable: rank 1 fails while rank 0 waits in a collective.  The job must
-- end (MPI_Abort from the executable's error exit), not hang.
local chainermn = require 'chainermn'
local T = require 'chainer.tensor'
local comm = chainermn.create_communicator('flat')
if comm.rank == 1 then error('rank 1 fails on purpose') end
comm:allreduce(T.ones({ 2 }))
print('rank 0 was not stopped')

-- chainermn/_mpi.lua: Open MPI through the LuaJIT FFI, loaded on first use.
--
-- Open MPI's handles (MPI_Comm, MPI_Datatype, MPI_Op) are pointers to global
-- objects the library exports (ompi_mpi_comm_world, ompi_mpi_double, ...),
-- so the FFI reaches them directly and no C shim is needed.  The library is
-- loaded with RTLD_GLOBAL: Open MPI's plugins resolve libmpi's symbols from
-- the global namespace.  Nothing here runs at `require` time, so chainermn
-- loads on a machine without MPI and fails only when a communicator is asked
-- for, saying what to install.
local ffi = require 'ffi'

local M = {}

local cdefs_done = false
local function cdefs()
  if cdefs_done then return end
  cdefs_done = true
  ffi.cdef [[
typedef struct ompi_communicator_t *MPI_Comm;
typedef struct ompi_datatype_t *MPI_Datatype;
typedef struct ompi_op_t *MPI_Op;
typedef struct ompi_info_t *MPI_Info;
typedef struct ompi_request_t *MPI_Request;
typedef struct ompi_status_public_t {
  int MPI_SOURCE; int MPI_TAG; int MPI_ERROR; int _cancelled; size_t _ucount;
} MPI_Status;

/* the predefined objects; only their addresses are used, so char arrays */
extern char ompi_mpi_comm_world[1], ompi_mpi_info_null[1], ompi_mpi_op_sum[1], ompi_mpi_op_max[1],
  ompi_mpi_byte[1], ompi_mpi_int8_t[1], ompi_mpi_uint8_t[1],
  ompi_mpi_int16_t[1], ompi_mpi_int32_t[1], ompi_mpi_int64_t[1], ompi_mpi_float[1], ompi_mpi_double[1];

int MPI_Initialized(int *flag);
int MPI_Finalized(int *flag);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Finalize(void);
int MPI_Abort(MPI_Comm comm, int errorcode);
int MPI_Comm_rank(MPI_Comm comm, int *rank);
int MPI_Comm_size(MPI_Comm comm, int *size);
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int MPI_Comm_free(MPI_Comm *comm);
int MPI_Barrier(MPI_Comm comm);
int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm);
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request);
int MPI_Waitall(int count, MPI_Request *requests, MPI_Status *statuses);
int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm);
int MPI_Gather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
               MPI_Datatype rdt, int root, MPI_Comm comm);
int MPI_Gatherv(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int *rcounts,
                const int *displs, MPI_Datatype rdt, int root, MPI_Comm comm);
int MPI_Allgather(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                  MPI_Datatype rdt, MPI_Comm comm);
int MPI_Allgatherv(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, const int *rcounts,
                   const int *displs, MPI_Datatype rdt, MPI_Comm comm);
int MPI_Alltoall(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                 MPI_Datatype rdt, MPI_Comm comm);
int MPI_Alltoallv(const void *sendbuf, const int *scounts, const int *sdispls, MPI_Datatype sdt,
                  void *recvbuf, const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm comm);
int MPI_Scatter(const void *sendbuf, int scount, MPI_Datatype sdt, void *recvbuf, int rcount,
                MPI_Datatype rdt, int root, MPI_Comm comm);
int MPI_Scatterv(const void *sendbuf, const int *scounts, const int *displs, MPI_Datatype sdt,
                 void *recvbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm);
int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm);
int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm);
int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status);
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int MPI_Get_count(const MPI_Status *status, MPI_Datatype dt, int *count);
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
int MPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op);
]]
end

local INSTALL_HINT = 'chainermn needs Open MPI: install it (Debian/Ubuntu: apt-get install openmpi-bin ' ..
  'libopenmpi-dev, or scripts/install-deps) and start the program with mpirun'

local lib
-- The loaded library (ffi namespace); the first call loads it and errors
-- with the install hint when it is absent.
function M.lib()
  if lib then return lib end
  cdefs()
  local tried, names = {}, { 'libmpi.so', 'libmpi.so.40' }
  local override = os.getenv('CHAINERMN_LIBMPI')   -- another MPI build's libmpi.so
  if override and override ~= '' then table.insert(names, 1, override) end
  for _, name in ipairs(names) do
    do
      local ok, l = pcall(ffi.load, name, true)
      if ok then lib = l; return lib end
      tried[#tried + 1] = name
    end
  end
  error('chainermn: cannot load the MPI library (tried ' .. table.concat(tried, ', ') .. '); ' .. INSTALL_HINT, 0)
end

-- MPI_COMM_TYPE_SHARED and MPI_THREAD_FUNNELED in Open MPI's mpi.h enums.
M.COMM_TYPE_SHARED = 0
M.THREAD_FUNNELED = 1
M.SUCCESS = 0
-- MPI_ANY_TAG in Open MPI's mpi.h; the largest tag every
-- MPI allows (MPI_TAG_UB is at least this).
M.ANY_TAG = -1
M.TAG_UB = 32767

local function handle(ctype, name) return ffi.cast(ctype, M.lib()[name]) end

function M.comm_world() return handle('MPI_Comm', 'ompi_mpi_comm_world') end
function M.info_null() return handle('MPI_Info', 'ompi_mpi_info_null') end
function M.op(name) return handle('MPI_Op', 'ompi_mpi_op_' .. name) end

-- chainlua dtype name -> Open MPI's predefined datatype (float16 and bool
-- travel as bytes: they can be broadcast or gathered, not summed).
local DATATYPES = {
  int8 = 'ompi_mpi_int8_t', uint8 = 'ompi_mpi_uint8_t', int16 = 'ompi_mpi_int16_t',
  int32 = 'ompi_mpi_int32_t', int64 = 'ompi_mpi_int64_t',
  float32 = 'ompi_mpi_float', float64 = 'ompi_mpi_double',
}
function M.summable(dtype) return DATATYPES[dtype] ~= nil end
function M.datatype(dtype) return handle('MPI_Datatype', DATATYPES[dtype] or 'ompi_mpi_byte') end
function M.byte() return handle('MPI_Datatype', 'ompi_mpi_byte') end

-- pair_mean_op(dtype): an MPI_Op that makes (a + b) * 0.5 of two float32 or
-- float64 values (libchainlua's ch_pair_mean_*, runtime/cpu/pair_mean.c),
-- made once per dtype; nil for other dtypes.  With two ranks an allreduce
-- applies it once per element: the mean in the pass that sums.
local PAIR_MEAN = { float32 = 'ch_pair_mean_f32', float64 = 'ch_pair_mean_f64' }
local pair_ops = {}
function M.pair_mean_op(dtype)
  local name = PAIR_MEAN[dtype]
  if name == nil then return nil end
  if pair_ops[dtype] == nil then
    ffi.cdef('void ' .. name .. '(void *, void *, int *, MPI_Datatype *);')
    local op = ffi.new('MPI_Op[1]')
    local fn = require('chainer._lib').C[name]
    M.check(M.lib().MPI_Op_create(ffi.cast('MPI_User_function *', fn), 1, op), 'MPI_Op_create')
    pair_ops[dtype] = op[0]
  end
  return pair_ops[dtype]
end

-- check(rc, what): MPI's default error handler aborts the job on failure,
-- so a non-zero code here means a handler was changed; still say so.
function M.check(rc, what)
  if rc ~= M.SUCCESS then error(string.format('chainermn: %s failed (MPI error code %d)', what, rc), 3) end
end

local finalizer_anchor

-- Non-blocking collectives not yet waited for: MPI_Request array ->
-- { count = its length, buffers = what MPI reads and writes }.  Whoever
-- starts one keeps it here until it is waited for, so that its buffers stay
-- alive and MPI_Finalize waits for it.
M.pending = {}
-- init(): MPI_Init_thread once per process (FUNNELED: only the main thread
-- calls MPI; OpenMP threads run the kernels), MPI_Finalize when the Lua
-- state closes.
function M.init()
  local L = M.lib()
  local flag = ffi.new('int[1]')
  M.check(L.MPI_Initialized(flag), 'MPI_Initialized')
  if flag[0] ~= 0 then return end
  local provided = ffi.new('int[1]')
  M.check(L.MPI_Init_thread(nil, nil, M.THREAD_FUNNELED, provided), 'MPI_Init_thread')
  -- The chainlua executable calls these when the program ends with an
  -- uncaught error: abort the job (MPI_Finalize would wait for ranks that
  -- may be blocked in a collective waiting for this one).
  local registry = debug.getregistry()
  local hooks = registry['chainlua.on_error_exit'] or {}
  registry['chainlua.on_error_exit'] = hooks
  hooks[#hooks + 1] = function()
    local rank = ffi.new('int[1]')
    L.MPI_Comm_rank(M.comm_world(), rank)
    io.stderr:write(string.format('chainermn: rank %d ended with an error; aborting the MPI job\n', rank[0]))
    io.stderr:flush()
    L.MPI_Abort(M.comm_world(), 1)
  end
  -- a userdata whose collector finalizes MPI when the program's Lua state closes
  finalizer_anchor = ffi.gc(ffi.new('int[1]'), function()
    local done = ffi.new('int[1]')
    L.MPI_Finalized(done)
    if done[0] ~= 0 then return end
    -- a non-blocking collective still in flight (double buffering's last
    -- allreduce) must complete before MPI_Finalize; every rank started it
    for requests, p in pairs(M.pending) do L.MPI_Waitall(p.count, requests, nil) end
    L.MPI_Finalize()
  end)
end

return M

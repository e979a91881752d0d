-- chainermn/_shm_mean.lua: the mean of the gradient bucket over the ranks
-- through shared memory, when every rank of the communicator is on one node
-- (the intra-node step of ChainerMN's 'hierarchical' communicators; on
-- CPUs shared memory is the natural engine for it).
--
--   local engine = SharedMean.of(comm)   -- nil: the mean goes through MPI
--   engine:mean(bucket, i)               -- buffer i of the bucket := its mean
--
-- Each rank's gradient buffer lives in its own slot of an MPI-3 shared
-- window (MPI_Win_allocate_shared on the communicator): the first mean of a
-- bucket moves the buffer there (chainer/_grad_bucket.lua's move_buffer),
-- and from then on backward writes the gradients straight into the slot, so
-- nothing is packed or copied in.  A mean is then:
--   1. a barrier: every rank's gradients are complete;
--   2. rank k averages slice k of the vector over all ranks' slots and
--      writes it into slice k of every slot (a reduce-scatter and an
--      allgather in one pass; rank k is the only one touching slice k);
--   3. a barrier: every slot holds the whole mean.  After it each rank
--      touches only its own slot (the next backward) until the next mean's
--      first barrier, so no third one is needed.
-- Each barrier is MPI_Win_sync, MPI_Barrier, MPI_Win_sync (the unified
-- memory model's recipe, inside one MPI_Win_lock_all epoch for the window's
-- life).
--
-- Bits: with two ranks the averaging is libchainlua's pair-mean function,
-- the very operator MPI_Allreduce applies on the MPI path, and (a + b) * 0.5
-- does not depend on the order of a and b, so both paths give the same bits.
-- With more ranks the slots are summed in rank order and multiplied by
-- 1/size with the same tensor op as the MPI path; MPI's own summation order
-- depends on its algorithm, so the two may differ in the last bit (both
-- paths give every rank the same bits).
--
-- Choosing: comm.mean_grad_via, else the environment variable
-- CHAINERMN_MEAN_GRAD: 'auto' (the default: shared memory when the
-- communicator has more than one rank, all on one node, and packs its
-- buffers), 'shm' (the same, an error when the ranks are on several nodes)
-- or 'mpi' (always MPI_Allreduce).  Every rank must choose alike (checked).
--
-- Windows are never freed before MPI_Finalize (MPI_Win_free is collective
-- and garbage collectors run at different times on different ranks); a
-- bucket rebuilt for a changed model takes a new window.
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local mpi = require 'chainermn._mpi'

local SharedMean = {}
SharedMean.__index = SharedMean

local cdefs_done = false
local function cdefs()
  if cdefs_done then return end
  mpi.lib()   -- MPI_Comm, MPI_Info, MPI_Op, MPI_Datatype
  cdefs_done = true
  ffi.cdef [[
typedef struct ompi_win_t *MPI_Win;
int MPI_Win_allocate_shared(ptrdiff_t size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win);
int MPI_Win_shared_query(MPI_Win win, int rank, ptrdiff_t *size, int *disp_unit, void *baseptr);
int MPI_Win_lock_all(int assert, MPI_Win win);
int MPI_Win_sync(MPI_Win win);
struct statvfs {
  unsigned long f_bsize, f_frsize, f_blocks, f_bfree, f_bavail, f_files, f_ffree, f_favail, f_fsid, f_flag,
    f_namemax;
  int spare[16];
};
int statvfs(const char *path, struct statvfs *buf);
]]
end

local MODE_NOCHECK = 1   -- MPI_MODE_NOCHECK in Open MPI's mpi.h
local PAGE = 4096        -- every slot starts on its own page
local PAIR_MEAN = { float32 = 'ch_pair_mean_f32', float64 = 'ch_pair_mean_f64' }
local CHOICES = { auto = 1, shm = 2, mpi = 3 }

local function choice(comm)
  local via = comm.mean_grad_via or os.getenv('CHAINERMN_MEAN_GRAD') or 'auto'
  if via == '' then via = 'auto' end
  if CHOICES[via] == nil then
    error(string.format("multi_node_mean_grad: mean_grad_via (or CHAINERMN_MEAN_GRAD) must be 'auto', 'shm' or " ..
      "'mpi' (got %s)", tostring(via)), 4)
  end
  return via
end

-- of(comm): the communicator's shared-memory engine, or nil when its
-- gradients' mean goes through MPI.  Decided again when the choice changes
-- (all ranks agree on it first, so none waits in a window the others do
-- not allocate).
function SharedMean.of(comm)
  local via = choice(comm)
  local cached = comm._shared_mean
  if cached and cached.via == via then return cached.engine end
  comm:_agree('multi_node_mean_grad', { CHOICES[via] }, 'mean_grad_via = ' .. via)
  local one_node = comm.intra_size == comm.size
  if via == 'shm' and not one_node then
    error(string.format("multi_node_mean_grad: mean_grad_via = 'shm' needs every rank on one node (the " ..
      'communicator spans %d nodes)', comm.inter_size), 4)
  end
  local engine = nil
  if via ~= 'mpi' and one_node and comm.size > 1 and comm._pack then
    cdefs()
    -- one engine per communicator, kept when the choice changes (its
    -- windows hold buckets).  windows: buffer tensor -> its window (see
    -- _allocate); refused: the buffers left to MPI for want of shared memory
    engine = comm._shm_engine or setmetatable({ comm = comm, L = comm._L, windows = {},
      refused = setmetatable({}, { __mode = 'k' }) }, SharedMean)
    engine.forced = via == 'shm'
    comm._shm_engine = engine
  end
  comm._shared_mean = { via = via, engine = engine }
  return engine
end

-- The synchronisation point of one window (see the header).
function SharedMean:_sync(w)
  local L = self.L
  mpi.check(L.MPI_Win_sync(w.win), 'MPI_Win_sync')
  mpi.check(L.MPI_Barrier(self.comm._comm), 'MPI_Barrier')
  mpi.check(L.MPI_Win_sync(w.win), 'MPI_Win_sync')
end

-- allocate(dtype, numel, bytes): a window with one slot of numel elements
-- (bytes, a whole number of pages) per rank (collective); returns its
-- record {win, dtype, numel, slots (char * per rank), tensor (this rank's
-- slot as a tensor), lo (the slices' bounds)}.
function SharedMean:_allocate(dtype, numel, bytes)
  local L, comm = self.L, self.comm
  local itemsize = dtype == 'float64' and 8 or 4
  local base, win = ffi.new('void *[1]'), ffi.new('MPI_Win[1]')
  mpi.check(L.MPI_Win_allocate_shared(bytes, itemsize, mpi.info_null(), comm._comm, base, win),
    'MPI_Win_allocate_shared')
  mpi.check(L.MPI_Win_lock_all(MODE_NOCHECK, win[0]), 'MPI_Win_lock_all')
  local slots, size, disp = {}, ffi.new('ptrdiff_t[1]'), ffi.new('int[1]')
  for r = 0, comm.size - 1 do
    local p = ffi.new('void *[1]')
    mpi.check(L.MPI_Win_shared_query(win[0], r, size, disp, p), 'MPI_Win_shared_query')
    slots[r] = ffi.cast('char *', p[0])
  end
  local shape = ffi.new('int64_t[1]', numel)
  T.check(T.C.ch_wrap_buffer(T.dtype_code(dtype), 1, shape, slots[comm.rank], T.box), 2)
  local w = { win = win[0], dtype = dtype, numel = numel, itemsize = itemsize, slots = slots,
    tensor = T.wrap(T.box[0]) }
  -- rank k's slice of the vector: [lo[k], lo[k + 1])
  w.nranks, w.lo = comm.size, {}
  for k = 0, comm.size do w.lo[k] = math.floor(k * numel / comm.size) end
  if comm.size == 2 then
    mpi.pair_mean_op(dtype)   -- declares libchainlua's ch_pair_mean_* to the FFI
    w.pair_mean = require('chainer._lib').C[PAIR_MEAN[dtype]]
    w.count = ffi.new('int[1]')
  else
    w.sum = T.empty({ w.lo[comm.rank + 1] - w.lo[comm.rank] }, dtype)
  end
  return w
end

-- A tensor over elements [lo, hi) of rank r's slot.
local function slice_of(w, r, lo, hi)
  local shape = ffi.new('int64_t[1]', hi - lo)
  T.check(T.C.ch_wrap_buffer(T.dtype_code(w.dtype), 1, shape, w.slots[r] + lo * w.itemsize, T.box), 2)
  return T.wrap(T.box[0])
end

-- Copies elements [from, from + n) of rank k's slot into every other rank's.
local function push(w, k, from, n)
  local off, bytes = from * w.itemsize, n * w.itemsize
  for r = 0, w.nranks - 1 do
    if r ~= k then ffi.copy(w.slots[r] + off, w.slots[k] + off, bytes) end
  end
end

-- The one step between the two barriers: slice k of every rank's slot :=
-- the mean of slice k over all ranks' slots (k = this rank; only rank k
-- touches slice k of any slot meanwhile).  A reduce-scatter and an
-- allgather in one pass: the mean is pushed to the others chunk by chunk,
-- while it is still in this core's cache.
local CHUNK = 32768   -- elements per chunk: 128-256 KiB, well inside L2
function SharedMean:_reduce_slice(w)
  local comm, k = self.comm, self.comm.rank
  local lo, hi = w.lo[k], w.lo[k + 1]
  if hi == lo then return end
  if comm.size == 2 then
    -- mine := (other + mine) * 0.5, by the function MPI applies on the MPI path
    local count = w.count
    for from = lo, hi - 1, CHUNK do
      count[0] = math.min(CHUNK, hi - from)
      local off = from * w.itemsize
      w.pair_mean(w.slots[1 - k] + off, w.slots[k] + off, count, nil)
      push(w, k, from, count[0])
    end
    return
  end
  if not w.views then
    w.views = {}
    for r = 0, comm.size - 1 do w.views[r] = slice_of(w, r, lo, hi) end
  end
  -- the sum in rank order, then times 1/size (the MPI path's scaling op)
  T.add(w.views[0], w.views[1], w.sum)
  for r = 2, comm.size - 1 do T.add(w.sum, w.views[r], w.sum) end
  T.mul(w.sum, 1 / comm.size, w.views[k])
  push(w, k, lo, hi - lo)
end

-- The bytes free where Open MPI puts a shared window's backing file (a
-- tmpfs such as /dev/shm; a container's may be small, and writing past its
-- end is a SIGBUS, not an error); nil when it cannot be read.
local function backing_space()
  local dir = os.getenv('OMPI_MCA_osc_sm_backing_directory') or '/dev/shm'
  local st = ffi.new('struct statvfs')
  if ffi.C.statvfs(dir, st) ~= 0 then return nil, dir end
  return tonumber(st.f_bavail) * tonumber(st.f_frsize), dir
end

-- Whether every rank sees room for a window of `bytes` per rank (agreed, so
-- that all allocate it or none does).
function SharedMean:_room_for(bytes)
  local free, dir = backing_space()
  local need = bytes * self.comm.size
  local ok = free ~= nil and free >= need
  if self.comm:_same_everywhere({ ok and 1 or 0 }) and ok then return true end
  if self.forced then
    error(string.format("multi_node_mean_grad: mean_grad_via = 'shm' needs %d bytes of shared memory in %s " ..
      '(%s free on this rank; a larger /dev/shm, e.g. docker --shm-size, or OMPI_MCA_osc_sm_backing_directory)',
      need, dir, free and tostring(free) or 'unknown'), 5)
  end
  return false
end

-- mean(bucket, i): buffer i of the gradient bucket := its mean over the
-- ranks, in place; false (nothing done: the caller uses MPI) when there is
-- no room for its window.  The first call for a buffer (all ranks
-- together: the caller has agreed on the layout) moves it into a new window.
function SharedMean:mean(bucket, i)
  local b = bucket.buffers[i]
  local w = self.windows[b.tensor]
  if w == nil then
    if self.refused[b.tensor] then return false end
    local bytes = math.ceil(b.tensor.nbytes / PAGE) * PAGE
    if not self:_room_for(bytes) then
      self.refused[b.tensor] = true
      return false
    end
    w = self:_allocate(b.dtype, b.tensor.size, bytes)
    bucket:move_buffer(i, w.tensor)
    self.windows[w.tensor] = w
  end
  self:_sync(w)           -- every rank's gradients are in its slot
  self:_reduce_slice(w)
  self:_sync(w)           -- every slot holds the whole mean; from here each rank touches only its own
  return true
end

return SharedMean

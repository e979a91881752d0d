-- chainermn/communicator.lua: a communicator over MPI on host memory (the
-- 'naive' and 'flat' communicators of ChainerMN): the ranks, the tensor
-- collectives and the Lua-value collectives.  The model-level operations
-- (bcast_data, multi_node_mean_grad) live in chainermn/model_sync.lua.
--
-- Every collective must be called by all ranks in the same order, as in MPI.
-- Where ranks could disagree about a message (allreduce's shapes and
-- dtypes), they first compare a small signature with one MPI_Allreduce, so a
-- mismatch is an error on every rank instead of a hang or garbage.
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local mpi = require 'chainermn._mpi'
local serialize = require 'chainermn._serialize'

local Communicator = {}
Communicator.__index = Communicator

local INT_MAX = 2147483647

local function int_out() return ffi.new('int[1]') end

local function comm_rank_size(L, comm)
  local r, s = int_out(), int_out()
  mpi.check(L.MPI_Comm_rank(comm, r), 'MPI_Comm_rank')
  mpi.check(L.MPI_Comm_size(comm, s), 'MPI_Comm_size')
  return r[0], s[0]
end

-- new(name, pack_buffers): the world communicator.  intra_* come from the
-- processes sharing this node's memory (MPI_Comm_split_type SHARED);
-- inter_rank is this node's index among the nodes, inter_size their number.
function Communicator.new(name, pack_buffers)
  mpi.init()
  local L = mpi.lib()
  local self = setmetatable({ name = name, _L = L, _comm = mpi.comm_world(), _pack = pack_buffers }, Communicator)
  self.rank, self.size = comm_rank_size(L, self._comm)
  local intra = ffi.new('MPI_Comm[1]')
  mpi.check(L.MPI_Comm_split_type(self._comm, mpi.COMM_TYPE_SHARED, self.rank, mpi.info_null(), intra),
    'MPI_Comm_split_type')
  self.intra_rank, self.intra_size = comm_rank_size(L, intra[0])
  -- the node leaders (intra_rank 0) number the nodes; each tells its node
  local leaders = ffi.new('MPI_Comm[1]')
  local is_leader = self.intra_rank == 0
  mpi.check(L.MPI_Comm_split(self._comm, is_leader and 0 or 1, self.rank, leaders), 'MPI_Comm_split')
  local node = ffi.new('int[2]')   -- {node index, number of nodes}
  if is_leader then node[0], node[1] = comm_rank_size(L, leaders[0]) end
  mpi.check(L.MPI_Bcast(node, 2, mpi.datatype('int32'), 0, intra[0]), 'MPI_Bcast')
  self.inter_rank, self.inter_size = node[0], node[1]
  mpi.check(L.MPI_Comm_free(leaders), 'MPI_Comm_free')
  mpi.check(L.MPI_Comm_free(intra), 'MPI_Comm_free')
  return self
end

function Communicator:__tostring()
  return string.format('chainermn communicator %s (rank %d of %d)', self.name, self.rank, self.size)
end

local function check_root(self, root, fn)
  root = root or 0
  if type(root) ~= 'number' or root ~= math.floor(root) or root < 0 or root >= self.size then
    error(string.format('%s: root must be a rank in 0..%d (got %s)', fn, self.size - 1, tostring(root)), 3)
  end
  return root
end

-- A contiguous CPU copy of t (t itself when it already is one) and a
-- pointer to its first element.
local function host_buffer(t)
  if t.ptr.dev >= 0 then t = t:to_cpu() end
  if not t.is_contiguous then t = t:contiguous() end
  return t, ffi.cast('char *', t.ptr.data) + t.ptr.offset * t.itemsize
end

---------------------------------------------------------------------------
-- Agreement: every rank learns whether all ranks passed the same signature
---------------------------------------------------------------------------

-- same_everywhere(values): true when the integers `values` are equal on all
-- ranks (one MPI_Allreduce of MAX over v and -v: max(v) == -max(-v) == min(v)).
function Communicator:_same_everywhere(values)
  local n = #values
  local send, recv = ffi.new('int64_t[?]', 2 * n), ffi.new('int64_t[?]', 2 * n)
  for i = 1, n do send[i - 1], send[n + i - 1] = values[i], -values[i] end
  mpi.check(self._L.MPI_Allreduce(send, recv, 2 * n, mpi.datatype('int64'), mpi.op('max'), self._comm),
    'MPI_Allreduce')
  for i = 0, n - 1 do
    if recv[i] ~= -recv[n + i] then return false end
  end
  return true
end

-- agree(fn, signature, description): errors on every rank, listing what
-- each rank passed, unless the signature (integers) is the same on all.
function Communicator:_agree(fn, signature, description)
  if self:_same_everywhere(signature) then return end
  local all = self:_allgather_obj(description)
  local parts = {}
  for r = 1, #all do parts[r] = string.format('rank %d: %s', r - 1, all[r]) end
  error(string.format('%s: the ranks passed different arguments (%s)', fn, table.concat(parts, '; ')), 3)
end

local MAX_DIMS = 16
local function tensor_signature(t)
  local sig = { T.dtype_codes[t.dtype], t.ndim }
  local shape = t.shape
  for i = 1, MAX_DIMS do sig[#sig + 1] = shape[i] or -1 end
  return sig
end
local function describe(t)
  return string.format('%s of shape (%s)', t.dtype, table.concat(t.shape, ', '))
end

---------------------------------------------------------------------------
-- Tensor collectives
---------------------------------------------------------------------------

-- bcast(t, root): root's tensor on every rank (a new tensor on the others;
-- their argument is ignored, as in ChainerMN, and may be nil).  Root sends
-- the dtype and shape first; a bad argument on root is sent as a refusal,
-- so every rank raises instead of waiting.
function Communicator:bcast(t, root)
  root = check_root(self, root, 'bcast')
  local L = self._L
  local header = ffi.new('int64_t[?]', 2 + MAX_DIMS)   -- dtype code (-1: refused), ndim, dims
  local problem
  if self.rank == root then
    if not T.is_tensor(t) then
      problem = 'the root must pass a tensor (got ' .. type(t) .. ')'
    elseif t.ndim > MAX_DIMS then
      problem = 'at most ' .. MAX_DIMS .. ' dimensions (got ' .. t.ndim .. ')'
    elseif t.size > INT_MAX then
      problem = 'a message of ' .. t.size .. ' elements is larger than MPI allows in one call'
    end
    local sig = problem and { -1 } or tensor_signature(t)
    for i = 1, #sig do header[i - 1] = sig[i] end
  end
  mpi.check(L.MPI_Bcast(header, 2 + MAX_DIMS, mpi.datatype('int64'), root, self._comm), 'MPI_Bcast')
  if header[0] < 0 then
    error('bcast: ' .. (problem or ('the root (rank ' .. root .. ') passed a bad argument')), 2)
  end
  local dtype = T.dtype_names[tonumber(header[0])]
  local buf, ptr
  if self.rank == root then
    buf, ptr = host_buffer(t)
  else
    local shape = {}
    for i = 1, tonumber(header[1]) do shape[i] = tonumber(header[1 + i]) end
    buf = T.empty(shape, dtype)
    ptr = ffi.cast('char *', buf.ptr.data) + buf.ptr.offset * buf.itemsize
  end
  local count, datatype = buf.size, mpi.datatype(dtype)
  if not mpi.summable(dtype) then count = buf.nbytes end   -- float16/bool travel as bytes
  mpi.check(L.MPI_Bcast(ptr, count, datatype, root, self._comm), 'MPI_Bcast')
  if self.rank == root then return t end
  return buf
end

-- allreduce(t): the element-wise SUM of every rank's t (ChainerMN's
-- allreduce; divide by comm.size for the mean), a new tensor on t's device.
local function allreduce_problem(t)
  if not T.is_tensor(t) then return 'expected a tensor (got ' .. type(t) .. ')' end
  if t.ndim > MAX_DIMS then return 'at most ' .. MAX_DIMS .. ' dimensions (got ' .. t.ndim .. ')' end
  if not mpi.summable(t.dtype) then
    return 'cannot sum ' .. t.dtype .. ' tensors over MPI (expected an int8..int64, uint8, float32 or float64 tensor)'
  end
  if t.size > INT_MAX then return 'a message of ' .. t.size .. ' elements is larger than MPI allows in one call' end
end

function Communicator:allreduce(t)
  -- a bad argument on one rank takes part in the agreement as a signature
  -- no other rank has, so every rank raises
  local problem = allreduce_problem(t)
  local sig = problem and { -1, self.rank } or tensor_signature(t)
  for i = #sig + 1, 2 + MAX_DIMS do sig[i] = -1 end
  self:_agree('allreduce', sig, problem or describe(t))
  if problem then error('allreduce: ' .. problem, 2) end
  local src, sptr = host_buffer(t)
  local out = T.empty(t.shape, t.dtype)
  local optr = ffi.cast('char *', out.ptr.data) + out.ptr.offset * out.itemsize
  mpi.check(self._L.MPI_Allreduce(sptr, optr, src.size, mpi.datatype(t.dtype), mpi.op('sum'), self._comm),
    'MPI_Allreduce')
  if t.ptr.dev >= 0 then out = out:to_device(t.ptr.dev) end
  return out
end

---------------------------------------------------------------------------
-- Lua-value collectives (serialised with chainermn/_serialize.lua)
---------------------------------------------------------------------------

-- encode(v, fn) -> bytes, or nil and the reason (sent as a refusal, so
-- that the other ranks raise too instead of waiting).
local function encode(v, fn)
  local ok, s = pcall(serialize.encode, v)
  if not ok then return nil, fn .. ': ' .. tostring(s):gsub('^chainermn: ', '') end
  if #s > INT_MAX then return nil, fn .. ': the value is too large to send (' .. #s .. ' bytes)' end
  return s
end

-- bcast_obj(v, root): root's value on every rank (root gets v itself).
function Communicator:bcast_obj(v, root)
  root = check_root(self, root, 'bcast_obj')
  local L = self._L
  local s, problem
  if self.rank == root then s, problem = encode(v, 'bcast_obj') end
  local len = ffi.new('int64_t[1]', s and #s or -1)
  mpi.check(L.MPI_Bcast(len, 1, mpi.datatype('int64'), root, self._comm), 'MPI_Bcast')
  local n = tonumber(len[0])
  if n < 0 then error(problem or ('bcast_obj: the root (rank ' .. root .. ') passed a value that cannot be sent'), 2) end
  local buf = ffi.new('char[?]', math.max(n, 1))
  if s then ffi.copy(buf, s, n) end
  mpi.check(L.MPI_Bcast(buf, n, mpi.byte(), root, self._comm), 'MPI_Bcast')
  if self.rank == root then return v end
  return serialize.decode(ffi.string(buf, n))
end

-- The decoded values of all ranks (on root only when root is given).  The
-- lengths go to every rank first, so a rank whose value could not be
-- encoded (length -1) makes every rank raise, naming it.
local function gather_bytes(self, fn, s, problem, root)
  local L, size = self._L, self.size
  local lens = ffi.new('int[?]', size)
  local mine = ffi.new('int[1]', s and #s or -1)
  mpi.check(L.MPI_Allgather(mine, 1, mpi.datatype('int32'), lens, 1, mpi.datatype('int32'), self._comm),
    'MPI_Allgather')
  local displs, total = ffi.new('int[?]', size), 0
  for r = 0, size - 1 do
    if lens[r] < 0 then
      error(r == self.rank and problem or string.format('%s: rank %d passed a value that cannot be sent', fn, r), 3)
    end
    displs[r] = total
    total = total + lens[r]
    if total > INT_MAX then error(fn .. ': the values are too large to gather (over 2 GiB)', 3) end
  end
  local receives = root == nil or self.rank == root
  local out = ffi.new('char[?]', receives and math.max(total, 1) or 1)
  if root == nil then
    mpi.check(L.MPI_Allgatherv(s, #s, mpi.byte(), out, lens, displs, mpi.byte(), self._comm), 'MPI_Allgatherv')
  else
    mpi.check(L.MPI_Gatherv(s, #s, mpi.byte(), out, lens, displs, mpi.byte(), root, self._comm), 'MPI_Gatherv')
  end
  if not receives then return nil end
  local values = {}
  for r = 0, size - 1 do values[r + 1] = serialize.decode(ffi.string(out + displs[r], lens[r])) end
  return values
end

-- gather_obj(v, root): on root, an array of every rank's value (index
-- rank + 1); nil on the other ranks.
function Communicator:gather_obj(v, root)
  root = check_root(self, root, 'gather_obj')
  local s, problem = encode(v, 'gather_obj')
  return gather_bytes(self, 'gather_obj', s, problem, root)
end

function Communicator:_allgather_obj(v)
  local s, problem = encode(v, 'allgather_obj')
  return gather_bytes(self, 'allgather_obj', s, problem, nil)
end

-- sum(a, b): numbers add, tensors add, tables add key by key.
local function sum(a, b, path)
  if type(a) == 'number' and type(b) == 'number' then return a + b end
  if T.is_tensor(a) and T.is_tensor(b) then
    if a.dtype ~= b.dtype or table.concat(a.shape, ',') ~= table.concat(b.shape, ',') then
      error(string.format('%s: %s and %s', path, describe(a), describe(b)), 0)
    end
    return a + b
  end
  if type(a) == 'table' and type(b) == 'table' and not T.is_tensor(a) and not T.is_tensor(b) then
    local out = {}
    for k, x in pairs(a) do
      if b[k] == nil then error(string.format('%s: key %s is on one rank only', path, tostring(k)), 0) end
      out[k] = sum(x, b[k], path .. '[' .. tostring(k) .. ']')
    end
    for k in pairs(b) do
      if a[k] == nil then error(string.format('%s: key %s is on one rank only', path, tostring(k)), 0) end
    end
    return out
  end
  error(string.format('%s: cannot add a %s and a %s (expected numbers, tensors or tables of them)',
    path, T.is_tensor(a) and 'tensor' or type(a), T.is_tensor(b) and 'tensor' or type(b)), 0)
end

-- allreduce_obj(v): the sum over ranks of v (numbers, tensors, or tables of
-- them with the same keys), the same value on every rank.
function Communicator:allreduce_obj(v)
  local all = self:_allgather_obj(v)
  local ok, total = pcall(function()
    local acc = all[1]
    for r = 2, #all do acc = sum(acc, all[r], 'the value') end
    return acc
  end)
  if not ok then error('allreduce_obj: ' .. tostring(total), 2) end
  return total
end

-- barrier(): returns when every rank has called it.
function Communicator:barrier()
  mpi.check(self._L.MPI_Barrier(self._comm), 'MPI_Barrier')
end

return Communicator

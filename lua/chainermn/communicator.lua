-- chainermn/communicator.lua: a communicator over MPI on host memory (the
-- 'naive' and 'flat' communicators of ChainerMN): the ranks, split, bcast,
-- allreduce and the Lua-value collectives.  gather, allgather, alltoall and
-- scatter are in chainermn/tensor_collectives.lua, send and recv in
-- chainermn/point_to_point.lua, the model-level operations (bcast_data,
-- multi_node_mean_grad) in chainermn/model_sync.lua.
--
-- Every collective must be called by all ranks in the same order, as in MPI.
-- Where ranks could disagree about a message (allreduce's shapes and
-- dtypes), they first compare a small signature with one MPI_Allreduce, so a
-- mismatch is an error on every rank instead of a hang or garbage.
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local mpi = require 'chainermn._mpi'
local msg = require 'chainermn._message'
local DataSizeError = require('chainermn.errors').DataSizeError

local Communicator = {}
Communicator.__index = Communicator

local HEADER = msg.HEADER
local check_root, host_buffer, describe, encode = msg.check_root, msg.host_buffer, msg.describe, msg.encode

local function int_out() return ffi.new('int[1]') end

local function comm_rank_size(L, comm)
  local r, s = int_out(), int_out()
  mpi.check(L.MPI_Comm_rank(comm, r), 'MPI_Comm_rank')
  mpi.check(L.MPI_Comm_size(comm, s), 'MPI_Comm_size')
  return r[0], s[0]
end

-- new(name, pack_buffers, mpi_comm): a communicator over mpi_comm (the
-- world when nil).  intra_* come from the processes sharing this node's
-- memory (MPI_Comm_split_type SHARED); inter_rank is this node's index
-- among the nodes, inter_size their number.
function Communicator.new(name, pack_buffers, mpi_comm)
  mpi.init()
  local L = mpi.lib()
  local self = setmetatable({ name = name, _L = L, _comm = mpi_comm or mpi.comm_world(), _pack = pack_buffers },
    Communicator)
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
  if name == 'hierarchical' then
    -- kept: the hierarchical communicator reduces within the node (intra),
    -- then among the node leaders (leaders), then broadcasts within the node
    self._intra, self._leaders = intra, leaders
  else
    mpi.check(L.MPI_Comm_free(leaders), 'MPI_Comm_free')
    mpi.check(L.MPI_Comm_free(intra), 'MPI_Comm_free')
  end
  return self
end

function Communicator:__tostring()
  return string.format('chainermn communicator %s (rank %d of %d)', self.name, self.rank, self.size)
end

local function check_int(v, what, fn)
  if type(v) ~= 'number' or v ~= math.floor(v) or v < 0 or v > msg.INT_MAX then
    error(string.format('%s: %s must be a non-negative integer (got %s)', fn, what, tostring(v)), 3)
  end
end

-- split(color, key): a communicator of the same kind over the ranks that
-- passed the same color, ordered by key (then by rank), as MPI_Comm_split.
-- (Its MPI communicator is not freed: MPI_Comm_free is collective and a
-- garbage collector runs at different times on different ranks.)
function Communicator:split(color, key)
  check_int(color, 'color', 'split')
  check_int(key, 'key', 'split')
  local out = ffi.new('MPI_Comm[1]')
  mpi.check(self._L.MPI_Comm_split(self._comm, color, key, out), 'MPI_Comm_split')
  return Communicator.new(self.name, self._pack, out[0])
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
  if type(description) == 'function' then description = description() end   -- built only when needed
  local all = self:_allgather_obj(description)
  local parts = {}
  for r = 1, #all do parts[r] = string.format('rank %d: %s', r - 1, all[r]) end
  error(string.format('%s: the ranks passed different arguments (%s)', fn, table.concat(parts, '; ')), 3)
end

local function tensor_signature(t)
  local sig = ffi.new('int64_t[?]', HEADER)
  msg.write_header(sig, 0, t)
  local out = {}
  for i = 0, HEADER - 1 do out[i + 1] = tonumber(sig[i]) end
  return out
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
  local header = ffi.new('int64_t[?]', HEADER)
  local problem
  if self.rank == root then
    problem = msg.tensor_problem(t)
    if problem then
      problem = T.is_tensor(t) and 'bcast: ' .. problem or 'bcast: the root must pass a tensor (got ' .. type(t) .. ')'
      msg.write_refusal(header, 0)
    else
      msg.write_header(header, 0, t)
    end
  end
  mpi.check(L.MPI_Bcast(header, HEADER, mpi.datatype('int64'), root, self._comm), 'MPI_Bcast')
  local dtype, shape = msg.read_header(header, 0)
  if not dtype then error(problem or ('bcast: the root (rank ' .. root .. ') passed a bad argument'), 2) end
  local buf, ptr
  if self.rank == root then
    buf, ptr = host_buffer(t)
  else
    buf = T.empty(shape, dtype)
    ptr = msg.pointer(buf)
  end
  local count, datatype = msg.count_type(dtype, buf.size, buf.itemsize)
  mpi.check(L.MPI_Bcast(ptr, count, datatype, root, self._comm), 'MPI_Bcast')
  if self.rank == root then return t end
  return buf
end

-- allreduce(t): the element-wise SUM of every rank's t (ChainerMN's
-- allreduce; divide by comm.size for the mean), a new tensor on t's device.
local function allreduce_problem(t)
  local problem = msg.tensor_problem(t)
  if problem then return problem end
  if not mpi.summable(t.dtype) then
    return 'cannot sum ' .. t.dtype .. ' tensors over MPI (expected an int8..int64, uint8, float32 or float64 tensor)'
  end
end

function Communicator:allreduce(t)
  -- a bad argument on one rank takes part in the agreement as a signature
  -- no other rank has, so every rank raises
  local problem = allreduce_problem(t)
  local sig = problem and { -1, self.rank } or tensor_signature(t)
  for i = #sig + 1, HEADER do sig[i] = -1 end
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

-- bcast_obj(v, root): root's value on every rank (root gets v itself).
function Communicator:bcast_obj(v, root)
  root = check_root(self, root, 'bcast_obj')
  local L = self._L
  local s, problem
  if self.rank == root then s, problem = encode(v, 'bcast_obj') end
  -- the length, -1 for a value that cannot be sent, minus the size of one
  -- too large for MPI (the other ranks raise DataSizeError too)
  local len = ffi.new('int64_t[1]', s and #s or DataSizeError.is(problem) and -problem.size or -1)
  mpi.check(L.MPI_Bcast(len, 1, mpi.datatype('int64'), root, self._comm), 'MPI_Bcast')
  local n = tonumber(len[0])
  if n < 0 then
    if problem then error(problem, 2) end
    if n < -1 then DataSizeError.raise('bcast_obj', "the root's (rank " .. root .. ') value', -n, msg.INT_MAX) end
    error('bcast_obj: the root (rank ' .. root .. ') passed a value that cannot be sent', 2)
  end
  local buf = ffi.new('char[?]', math.max(n, 1))
  if s then ffi.copy(buf, s, n) end
  mpi.check(L.MPI_Bcast(buf, n, mpi.byte(), root, self._comm), 'MPI_Bcast')
  if self.rank == root then return v end
  return msg.decode(ffi.string(buf, n))
end

-- The decoded values of all ranks (on root only when root is given).  The
-- lengths go to every rank first, so a rank whose value could not be
-- encoded (length -1) makes every rank raise, naming it.
local function gather_bytes(self, fn, s, problem, root)
  local L, size = self._L, self.size
  local lens = ffi.new('int[?]', size)
  local mine = ffi.new('int[1]', s and #s or DataSizeError.is(problem) and msg.TOO_LARGE or -1)
  mpi.check(L.MPI_Allgather(mine, 1, mpi.datatype('int32'), lens, 1, mpi.datatype('int32'), self._comm),
    'MPI_Allgather')
  local displs, total = ffi.new('int[?]', size), 0
  for r = 0, size - 1 do
    if lens[r] < 0 then
      if r == self.rank then error(problem, 3) end
      if lens[r] == msg.TOO_LARGE then DataSizeError.raise(fn, 'rank ' .. r .. "'s value", nil, msg.INT_MAX) end
      error(string.format('%s: rank %d passed a value that cannot be sent', fn, r), 3)
    end
    displs[r] = total
    total = total + lens[r]
  end
  -- (the same sum on every rank: all raise)
  if total > msg.INT_MAX then DataSizeError.raise(fn, 'the values together', total, msg.INT_MAX) end
  local receives = root == nil or self.rank == root
  local out = ffi.new('char[?]', receives and math.max(total, 1) or 1)
  if root == nil then
    mpi.check(L.MPI_Allgatherv(s, #s, mpi.byte(), out, lens, displs, mpi.byte(), self._comm), 'MPI_Allgatherv')
  else
    mpi.check(L.MPI_Gatherv(s, #s, mpi.byte(), out, lens, displs, mpi.byte(), root, self._comm), 'MPI_Gatherv')
  end
  if not receives then return nil end
  local values = {}
  for r = 0, size - 1 do values[r + 1] = msg.decode(ffi.string(out + displs[r], lens[r])) end
  return values
end

-- gather_obj(v, root): on root, an array of every rank's value (index
-- rank + 1); nil on the other ranks.
function Communicator:gather_obj(v, root)
  root = check_root(self, root, 'gather_obj')
  local s, problem = encode(v, 'gather_obj')
  return gather_bytes(self, 'gather_obj', s, problem, root)
end

-- scatter_obj(values, root): root passes an array of comm.size values;
-- rank r gets values[r + 1] (the others' argument is ignored).  A bad
-- argument on root reaches every rank as a length of -1.
function Communicator:scatter_obj(values, root)
  root = check_root(self, root, 'scatter_obj')
  local L, size = self._L, self.size
  local lens, displs = ffi.new('int[?]', size), ffi.new('int[?]', size)
  local parts, problem = {}, nil
  if self.rank == root then
    if type(values) ~= 'table' or T.is_tensor(values) or #values ~= size then
      problem = string.format('scatter_obj: the root must pass an array of %d values, one per rank (got %s)', size,
        type(values) == 'table' and not T.is_tensor(values) and ('an array of ' .. #values) or type(values))
    else
      local total = 0
      for r = 1, size do
        local s, why = encode(values[r], 'scatter_obj')
        if DataSizeError.is(why) then
          problem = DataSizeError.new('scatter_obj', 'the value for rank ' .. (r - 1), why.size, msg.INT_MAX)
          break
        end
        if not s then problem = why:gsub('the value', 'the value for rank ' .. (r - 1)); break end
        parts[r], displs[r - 1], lens[r - 1] = s, total, #s
        total = total + #s
      end
      if not problem and total > msg.INT_MAX then
        problem = DataSizeError.new('scatter_obj', 'the values together', total, msg.INT_MAX)
      end
    end
    if problem then
      local code = DataSizeError.is(problem) and msg.TOO_LARGE or -1
      for r = 0, size - 1 do lens[r] = code end
    end
  end
  local len = int_out()
  mpi.check(L.MPI_Scatter(lens, 1, mpi.datatype('int32'), len, 1, mpi.datatype('int32'), root, self._comm),
    'MPI_Scatter')
  if len[0] < 0 then
    if problem then error(problem, 2) end
    if len[0] == msg.TOO_LARGE then
      DataSizeError.raise('scatter_obj', "the root's (rank " .. root .. ') values', nil, msg.INT_MAX)
    end
    error('scatter_obj: the root (rank ' .. root .. ') passed values that cannot be sent', 2)
  end
  local send = self.rank == root and table.concat(parts) or nil
  local out = ffi.new('char[?]', math.max(len[0], 1))
  mpi.check(L.MPI_Scatterv(send, lens, displs, mpi.byte(), out, len[0], mpi.byte(), root, self._comm), 'MPI_Scatterv')
  return msg.decode(ffi.string(out, len[0]))
end

-- (fn: the collective the user called, named in errors)
function Communicator:_allgather_obj(v, fn)
  fn = fn or 'allgather_obj'
  local s, problem = encode(v, fn)
  return gather_bytes(self, fn, s, problem, nil)
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
  local all = self:_allgather_obj(v, 'allreduce_obj')
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

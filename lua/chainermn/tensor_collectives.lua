-- chainermn/tensor_collectives.lua: the communicator's gather, allgather,
-- alltoall and scatter of tensors (ChainerMN 7.8.1's semantics).
--
-- The ranks' tensors may differ in shape (MPI's *v collectives move them),
-- not in dtype.  Each collective first moves the fixed-size headers
-- (chainermn/_message.lua) so that every rank that must know a shape knows
-- it, and a bad argument anywhere travels as a refused header: every rank
-- raises, naming the rank, instead of waiting in a collective.  The data
-- then moves as bytes, in one MPI call.
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local mpi = require 'chainermn._mpi'
local msg = require 'chainermn._message'
local DataSizeError = require('chainermn.errors').DataSizeError
local Communicator = require 'chainermn.communicator'

local HEADER = msg.HEADER

local function int64s(n) return ffi.new('int64_t[?]', n) end
local function ints(n) return ffi.new('int[?]', n) end

local function header_text(dtype, shape)
  return string.format('%s of shape (%s)', dtype, table.concat(shape, ', '))
end

-- The shapes and dtype in `headers` (one per rank, rank order), or an
-- error on every rank (they all hold the same headers): a refused header
-- names its rank, different dtypes list every rank's tensor.
local function read_all(headers, size, fn, my_rank, my_problem)
  local dtypes, shapes = {}, {}
  for r = 0, size - 1 do
    local dtype, shape = msg.read_header(headers, r * HEADER)
    if not dtype then
      error(r == my_rank and (fn .. ': ' .. my_problem) or string.format('%s: rank %d passed a bad argument', fn, r), 3)
    end
    dtypes[r + 1], shapes[r + 1] = dtype, shape
  end
  for r = 2, size do
    if dtypes[r] ~= dtypes[1] then
      local parts = {}
      for i = 1, size do parts[i] = string.format('rank %d: %s', i - 1, header_text(dtypes[i], shapes[i])) end
      error(string.format('%s: every rank must pass one dtype (%s)', fn, table.concat(parts, '; ')), 3)
    end
  end
  return dtypes[1], shapes
end

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

-- Byte counts and displacements of tensors of `shapes` laid end to end,
-- and one flat buffer of `dtype` that holds them; views of it give the
-- tensors back.  Errors (on every rank alike) past MPI's 2 GiB.
local function layout(shapes, dtype, fn)
  local n = #shapes
  local counts, displs = ints(n), ints(n)
  local itemsize = T.empty({ 0 }, dtype).itemsize
  local elements = 0
  for i = 1, n do
    local k = numel(shapes[i])
    counts[i - 1], displs[i - 1] = k * itemsize, elements * itemsize
    elements = elements + k
  end
  if elements * itemsize > msg.INT_MAX then
    DataSizeError.raise(fn, 'the tensors together', elements * itemsize, msg.INT_MAX)
  end
  return counts, displs, elements
end

local function views(flat, shapes)
  local out, off = {}, 0
  for i, shape in ipairs(shapes) do
    local k = numel(shape)
    out[i] = flat:slice({ off, off + k }):reshape(shape)
    off = off + k
  end
  return out
end

-- Results go back to the device the argument came from.
local function to_device_of(list, t)
  if T.is_tensor(t) and t.ptr.dev >= 0 then
    for i, y in ipairs(list) do list[i] = y:to_device(t.ptr.dev) end
  end
  return list
end

-- Every rank's header of x, on every rank.
local function allgather_headers(self, x, problem)
  local mine, all = int64s(HEADER), int64s(HEADER * self.size)
  if problem then msg.write_refusal(mine, 0) else msg.write_header(mine, 0, x) end
  mpi.check(self._L.MPI_Allgather(mine, HEADER, mpi.datatype('int64'), all, HEADER, mpi.datatype('int64'),
    self._comm), 'MPI_Allgather')
  return all
end

-- gather(x, root): on root, an array of every rank's tensor (index rank + 1;
-- shapes may differ, dtypes may not); nil on the other ranks.
function Communicator:gather(x, root)
  local fn = 'gather'
  root = msg.check_root(self, root, fn)
  local problem = msg.tensor_problem(x)
  local dtype, shapes = read_all(allgather_headers(self, x, problem), self.size, fn, self.rank, problem)
  local counts, displs, elements = layout(shapes, dtype, fn)
  local src, sptr = msg.host_buffer(x)
  local flat = self.rank == root and T.empty({ elements }, dtype) or nil
  mpi.check(self._L.MPI_Gatherv(sptr, src.nbytes, mpi.byte(), flat and msg.pointer(flat) or nil, counts, displs,
    mpi.byte(), root, self._comm), 'MPI_Gatherv')
  if not flat then return nil end
  return to_device_of(views(flat, shapes), x)
end

-- allgather(x): every rank's tensor on every rank, as gather gives root.
function Communicator:allgather(x)
  local fn = 'allgather'
  local problem = msg.tensor_problem(x)
  local dtype, shapes = read_all(allgather_headers(self, x, problem), self.size, fn, self.rank, problem)
  local counts, displs, elements = layout(shapes, dtype, fn)
  local src, sptr = msg.host_buffer(x)
  local flat = T.empty({ elements }, dtype)
  mpi.check(self._L.MPI_Allgatherv(sptr, src.nbytes, mpi.byte(), msg.pointer(flat), counts, displs, mpi.byte(),
    self._comm), 'MPI_Allgatherv')
  return to_device_of(views(flat, shapes), x)
end

-- Packs the tensors xs end to end into one host buffer of their dtype.
local function pack(xs, dtype)
  local shapes = {}
  for i, x in ipairs(xs) do shapes[i] = x.shape end
  local _, displs, elements = layout(shapes, dtype, 'pack')
  local flat = T.empty({ elements }, dtype)
  local base = msg.pointer(flat)
  for i, x in ipairs(xs) do
    local h, p = msg.host_buffer(x)
    ffi.copy(base + displs[i - 1], p, h.nbytes)
  end
  return flat
end

-- alltoall(xs): xs holds comm.size tensors of one dtype; rank r's xs[j + 1]
-- goes to rank j, and each rank gets an array whose element r + 1 came
-- from rank r.
function Communicator:alltoall(xs)
  local fn, size = 'alltoall', self.size
  local problem = msg.tensor_list_problem(xs, size)
  -- the headers each rank receives, one per sender
  local send, recv = int64s(HEADER * size), int64s(HEADER * size)
  for j = 0, size - 1 do
    if problem then msg.write_refusal(send, j * HEADER) else msg.write_header(send, j * HEADER, xs[j + 1]) end
  end
  mpi.check(self._L.MPI_Alltoall(send, HEADER, mpi.datatype('int64'), recv, HEADER, mpi.datatype('int64'),
    self._comm), 'MPI_Alltoall')
  -- a refusal reaches every rank; different dtypes too: each rank has
  -- checked its own list, and rank 0's dtype must be everyone's
  local code = problem and msg.REFUSED or T.dtype_codes[xs[1].dtype]
  local codes = int64s(size)
  mpi.check(self._L.MPI_Allgather(ffi.new('int64_t[1]', code), 1, mpi.datatype('int64'), codes, 1,
    mpi.datatype('int64'), self._comm), 'MPI_Allgather')
  for r = 0, size - 1 do
    if codes[r] == msg.REFUSED then
      error(r == self.rank and (fn .. ': ' .. problem) or string.format('%s: rank %d passed a bad argument', fn, r), 2)
    end
  end
  for r = 1, size - 1 do
    if codes[r] ~= codes[0] then
      local parts = {}
      for i = 0, size - 1 do parts[i + 1] = string.format('rank %d: %s', i, T.dtype_names[tonumber(codes[i])]) end
      error(string.format('%s: every rank must pass one dtype (%s)', fn, table.concat(parts, '; ')), 2)
    end
  end
  local dtype = xs[1].dtype
  local _, rshapes = read_all(recv, size, fn, self.rank, problem)
  local sshapes = {}
  for j = 1, size do sshapes[j] = xs[j].shape end
  -- Each rank sizes its own sends and receives: one over MPI's limit must
  -- stop the others too (they would wait in MPI_Alltoallv), so the ranks
  -- agree first, and all raise a DataSizeError.
  local ok_s, scounts, sdispls = pcall(layout, sshapes, dtype, fn)
  local ok_r, rcounts, rdispls, relements = pcall(layout, rshapes, dtype, fn)
  local too_large = (not ok_s and scounts) or (not ok_r and rcounts) or nil
  if too_large and not DataSizeError.is(too_large) then error(too_large, 0) end
  local flags = int64s(size)
  mpi.check(self._L.MPI_Allgather(ffi.new('int64_t[1]', too_large and 1 or 0), 1, mpi.datatype('int64'), flags, 1,
    mpi.datatype('int64'), self._comm), 'MPI_Allgather')
  for r = 0, size - 1 do
    if flags[r] ~= 0 then
      if too_large then error(too_large, 0) end
      DataSizeError.raise(fn, string.format("rank %d's tensors together", r), nil, msg.INT_MAX)
    end
  end
  local sflat, rflat = pack(xs, dtype), T.empty({ relements }, dtype)
  mpi.check(self._L.MPI_Alltoallv(msg.pointer(sflat), scounts, sdispls, mpi.byte(), msg.pointer(rflat), rcounts,
    rdispls, mpi.byte(), self._comm), 'MPI_Alltoallv')
  return to_device_of(views(rflat, rshapes), xs[1])
end

-- scatter(xs, root): root passes comm.size tensors of one dtype (an array),
-- or one tensor whose first axis has comm.size entries; rank r gets
-- xs[r + 1] (or xs's r-th slice along the first axis).  The others'
-- argument is ignored.
function Communicator:scatter(xs, root)
  local fn, size = 'scatter', self.size
  root = msg.check_root(self, root, fn)
  local headers, problem, sflat, counts, displs
  if self.rank == root then
    local parts
    if T.is_tensor(xs) then
      problem = msg.tensor_problem(xs)
      if not problem and (xs.ndim == 0 or xs.shape[1] ~= size) then
        problem = string.format('a tensor must have %d entries, one per rank, along its first axis (got shape (%s))',
          size, table.concat(xs.shape, ', '))
      end
      if not problem then
        parts = {}
        for r = 1, size do parts[r] = xs:select(r - 1, 0) end
      end
    else
      problem = msg.tensor_list_problem(xs, size)
      parts = xs
    end
    if not problem then
      -- all parts together over MPI's limit: a DataSizeError, sent to the
      -- others as the dtype code TOO_LARGE so that they raise it too
      local shapes = {}
      for r = 1, size do shapes[r] = parts[r].shape end
      local ok, c, d = pcall(layout, shapes, parts[1].dtype, fn)
      if not ok then
        if not DataSizeError.is(c) then error(c, 0) end
        problem = c
      else
        counts, displs = c, d
        sflat = pack(parts, parts[1].dtype)
      end
    end
    headers = int64s(HEADER * size)
    for r = 0, size - 1 do
      if DataSizeError.is(problem) then
        for i = 0, HEADER - 1 do headers[r * HEADER + i] = msg.TOO_LARGE end
      elseif problem then
        msg.write_refusal(headers, r * HEADER)
      else
        msg.write_header(headers, r * HEADER, parts[r + 1])
      end
    end
  end
  local mine = int64s(HEADER)
  mpi.check(self._L.MPI_Scatter(headers, HEADER, mpi.datatype('int64'), mine, HEADER, mpi.datatype('int64'), root,
    self._comm), 'MPI_Scatter')
  if tonumber(mine[0]) == msg.TOO_LARGE then
    if problem then error(problem, 2) end
    DataSizeError.raise(fn, "the root's (rank " .. root .. ') tensors together', nil, msg.INT_MAX)
  end
  local dtype, shape = msg.read_header(mine, 0)
  if not dtype then
    error(problem and (fn .. ': ' .. problem) or string.format('%s: the root (rank %d) passed a bad argument', fn, root), 2)
  end
  local out = T.empty(shape, dtype)
  mpi.check(self._L.MPI_Scatterv(sflat and msg.pointer(sflat) or nil, counts, displs, mpi.byte(), msg.pointer(out),
    out.nbytes, mpi.byte(), root, self._comm), 'MPI_Scatterv')
  if self.rank == root then return to_device_of({ out }, T.is_tensor(xs) and xs or xs[1])[1] end
  return out
end

return Communicator

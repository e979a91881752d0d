-- chainermn/_message.lua: what the communicator's collectives share about
-- the messages they move: host buffers of tensors, the fixed-size header
-- that describes a tensor (dtype, shape) to the other ranks, argument checks
-- and the encoding of Lua values.
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local mpi = require 'chainermn._mpi'
local serialize = require 'chainermn._serialize'
local DataSizeError = require('chainermn.errors').DataSizeError

local M = {}

M.INT_MAX = 2147483647   -- the largest element count one MPI call takes
M.MAX_DIMS = 16
M.HEADER = 2 + M.MAX_DIMS   -- int64s per tensor header: dtype code, ndim, dims
M.REFUSED = -1              -- a header's dtype code when the sender's argument was bad
M.TOO_LARGE = -2            -- a length sent in place of one that MPI cannot take (DataSizeError)

-- pointer(t): a char * to t's first element.
function M.pointer(t) return ffi.cast('char *', t.ptr.data) + t.ptr.offset * t.itemsize end

-- host_buffer(t) -> a contiguous CPU copy of t (t itself when it is one)
-- and a pointer to its first element.
function M.host_buffer(t)
  if t.ptr.dev >= 0 then t = t:to_cpu() end
  if not t.is_contiguous then t = t:contiguous() end
  return t, M.pointer(t)
end

-- The MPI count and datatype that move `t`'s elements (float16 and bool
-- travel as bytes: they can be moved, not summed).
function M.count_type(dtype, size, itemsize)
  if mpi.summable(dtype) then return size, mpi.datatype(dtype) end
  return size * itemsize, mpi.byte()
end

-- check_root(comm, root, fn): root defaults to 0 and must be a rank.
function M.check_root(comm, root, fn, level)
  root = root or 0
  if type(root) ~= 'number' or root ~= math.floor(root) or root < 0 or root >= comm.size then
    error(string.format('%s: root must be a rank in 0..%d (got %s)', fn, comm.size - 1, tostring(root)), level or 3)
  end
  return root
end

-- check_peer(comm, r, what, fn): r must be a rank (a point-to-point partner).
function M.check_peer(comm, r, what, fn, level)
  if type(r) ~= 'number' or r ~= math.floor(r) or r < 0 or r >= comm.size then
    error(string.format('%s: %s must be a rank in 0..%d (got %s)', fn, what, comm.size - 1, tostring(r)), level or 3)
  end
end

-- tensor_problem(t): why t cannot travel (not a tensor, too many dimensions,
-- over 2 GiB), or nil.
function M.tensor_problem(t)
  if not T.is_tensor(t) then return 'expected a tensor (got ' .. type(t) .. ')' end
  if t.ndim > M.MAX_DIMS then return 'at most ' .. M.MAX_DIMS .. ' dimensions (got ' .. t.ndim .. ')' end
  if t.nbytes > M.INT_MAX then return 'a message of ' .. t.nbytes .. ' bytes is larger than MPI allows in one call' end
end

-- tensor_list_problem(xs, n): why the array xs of tensors (one dtype;
-- exactly n of them when n is given) cannot travel, or nil.
function M.tensor_list_problem(xs, n)
  if type(xs) ~= 'table' or T.is_tensor(xs) then
    return 'expected an array of tensors (got ' .. (T.is_tensor(xs) and 'a tensor' or type(xs)) .. ')'
  end
  if n and #xs ~= n then return string.format('expected %d tensors, one per rank (got %d)', n, #xs) end
  if #xs == 0 then return 'expected at least one tensor' end
  for i, x in ipairs(xs) do
    local p = M.tensor_problem(x)
    if p then return string.format('element %d: %s', i, p) end
    if x.dtype ~= xs[1].dtype then
      return string.format('all tensors must have one dtype (element 1 is %s, element %d %s)', xs[1].dtype, i, x.dtype)
    end
  end
end

-- write_header(buf, at, t) / write_refusal(buf, at): the header of a
-- tensor at int64 index `at` of buf.
function M.write_header(buf, at, t)
  buf[at], buf[at + 1] = T.dtype_codes[t.dtype], t.ndim
  local shape = t.shape
  for i = 1, M.MAX_DIMS do buf[at + 1 + i] = shape[i] or -1 end
end
function M.write_refusal(buf, at)
  for i = 0, M.HEADER - 1 do buf[at + i] = M.REFUSED end
end

-- read_header(buf, at) -> dtype name and shape, or nil for a refusal.
function M.read_header(buf, at)
  local code = tonumber(buf[at])
  if code == M.REFUSED then return nil end
  local shape = {}
  for i = 1, tonumber(buf[at + 1]) do shape[i] = tonumber(buf[at + 1 + i]) end
  return T.dtype_names[code], shape
end

function M.describe(t)
  return string.format('%s of shape (%s)', t.dtype, table.concat(t.shape, ', '))
end

-- encode(v, fn) -> bytes, or nil and the reason (sent as a refusal, so
-- that the other ranks raise too instead of waiting): a message, or a
-- DataSizeError when the bytes are more than one MPI call takes.
function M.encode(v, fn)
  local ok, s = pcall(serialize.encode, v)
  if not ok then return nil, fn .. ': ' .. tostring(s):gsub('^chainermn: ', '') end
  if #s > M.INT_MAX then return nil, DataSizeError.new(fn, 'the value', #s, M.INT_MAX) end
  return s
end

M.decode = serialize.decode

return M

-- chainermn/point_to_point.lua: the communicator's send and recv of tensors
-- and send_obj and recv_obj of Lua values (ChainerMN 7.8.1's semantics).
--
-- send(data, dest, tag) sends a description first (dtype, shapes, whether
-- data was an array), then each tensor's bytes, all with `tag`; recv learns
-- the sizes from the description.  A sender whose argument is bad still
-- sends a description, saying why, so the receiver raises too instead of
-- waiting.  Tensors go with MPI_Ssend, as ChainerMN's (a send completes
-- when the receiver takes it); objects with MPI_Send, as mpi4py's.
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local mpi = require 'chainermn._mpi'
local msg = require 'chainermn._message'
local DataSizeError = require('chainermn.errors').DataSizeError
local Communicator = require 'chainermn.communicator'

local function check_tag(tag, fn, any_allowed, level)
  if any_allowed and tag == mpi.ANY_TAG then return end
  if type(tag) ~= 'number' or tag ~= math.floor(tag) or tag < 0 or tag > mpi.TAG_UB then
    error(string.format('%s: tag must be an integer in 0..%d%s (got %s)', fn, mpi.TAG_UB,
      any_allowed and ' or -1 (any tag)' or '', tostring(tag)), level)
  end
end

-- The partner rank checked and the tag (default_tag when nil), for the
-- user's call two levels up.
local function peer_and_tag(self, fn, peer, what, tag, default_tag, any_allowed)
  msg.check_peer(self, peer, what, fn, 4)
  tag = tag or default_tag
  check_tag(tag, fn, any_allowed, 4)
  return tag
end

-- Sends the string s (one message of bytes) to dest with tag.
local function send_bytes(self, s, dest, tag, synchronous)
  local f = synchronous and self._L.MPI_Ssend or self._L.MPI_Send
  mpi.check(f(s, #s, mpi.byte(), dest, tag, self._comm), synchronous and 'MPI_Ssend' or 'MPI_Send')
end

-- Receives one message of bytes from source (tag may be ANY_TAG): the
-- string and the tag it came with.
local function recv_bytes(self, source, tag)
  local L, status = self._L, ffi.new('MPI_Status[1]')
  mpi.check(L.MPI_Probe(source, tag, self._comm, status), 'MPI_Probe')
  local n = ffi.new('int[1]')
  mpi.check(L.MPI_Get_count(status, mpi.byte(), n), 'MPI_Get_count')
  local got = status[0].MPI_TAG
  local buf = ffi.new('char[?]', math.max(n[0], 1))
  mpi.check(L.MPI_Recv(buf, n[0], mpi.byte(), source, got, self._comm, status), 'MPI_Recv')
  return ffi.string(buf, n[0]), got
end

---------------------------------------------------------------------------
-- Tensors
---------------------------------------------------------------------------

-- send(data, dest, tag): data is a tensor or an array of tensors of one
-- dtype; the receiver's recv gets the same (tag defaults to 0).
function Communicator:send(data, dest, tag)
  local fn = 'send'
  tag = peer_and_tag(self, fn, dest, 'dest', tag, 0)
  local is_array = type(data) == 'table' and not T.is_tensor(data)
  local list = is_array and data or { data }
  local problem
  if is_array then problem = msg.tensor_list_problem(data) else problem = msg.tensor_problem(data) end
  local description
  if problem then
    description = { problem = problem }
  else
    local shapes = {}
    for i, x in ipairs(list) do shapes[i] = x.shape end
    description = { dtype = list[1].dtype, shapes = shapes, array = is_array }
  end
  send_bytes(self, msg.encode(description, fn), dest, tag, true)
  if problem then error(fn .. ': ' .. problem, 2) end
  for _, x in ipairs(list) do
    local h, p = msg.host_buffer(x)
    mpi.check(self._L.MPI_Ssend(p, h.nbytes, mpi.byte(), dest, tag, self._comm), 'MPI_Ssend')
  end
end

-- recv(source, tag): what rank `source` sent with send (a tensor, or an
-- array of tensors when it sent an array), on the host.  tag defaults to
-- any tag.
function Communicator:recv(source, tag)
  local fn = 'recv'
  tag = peer_and_tag(self, fn, source, 'source', tag, mpi.ANY_TAG, true)
  local s, got = recv_bytes(self, source, tag)
  local ok, d = pcall(msg.decode, s)
  if not ok or type(d) ~= 'table' then
    error(string.format('%s: the message from rank %d with tag %d is not one send made (was it sent by send_obj?)',
      fn, source, got), 2)
  end
  if d.problem then error(string.format('%s: rank %d could not send: %s', fn, source, d.problem), 2) end
  local out = {}
  for i, shape in ipairs(d.shapes) do
    local t = T.empty(shape, d.dtype)
    mpi.check(self._L.MPI_Recv(msg.pointer(t), t.nbytes, mpi.byte(), source, got, self._comm, nil), 'MPI_Recv')
    out[i] = t
  end
  if d.array then return out end
  return out[1]
end

---------------------------------------------------------------------------
-- Lua values
---------------------------------------------------------------------------

-- send_obj(v, dest, tag): v (what bcast_obj sends) to rank dest (tag 0 by
-- default).  A value that cannot be encoded still sends a message, so the
-- receiver raises too.
function Communicator:send_obj(v, dest, tag)
  local fn = 'send_obj'
  tag = peer_and_tag(self, fn, dest, 'dest', tag, 0)
  local s, problem = msg.encode(v, fn)
  -- a one-letter kind, then the value ('v'), the reason it cannot be sent
  -- ('x') or the size of one too large for MPI ('z': DataSizeError)
  local too_large = DataSizeError.is(problem)
  send_bytes(self, s and ('v' .. s) or too_large and ('z' .. problem.size) or ('x' .. problem), dest, tag, false)
  if problem then error(problem, 2) end
end

-- recv_obj(source, tag): the value rank `source` sent with send_obj (tag
-- defaults to any tag).
function Communicator:recv_obj(source, tag)
  local fn = 'recv_obj'
  tag = peer_and_tag(self, fn, source, 'source', tag, mpi.ANY_TAG, true)
  local s, got = recv_bytes(self, source, tag)
  local kind, body = s:sub(1, 1), s:sub(2)
  if kind == 'x' then error(string.format('%s: rank %d could not send: %s', fn, source, body), 2) end
  if kind == 'z' then DataSizeError.raise(fn, 'the value of rank ' .. source, tonumber(body), msg.INT_MAX) end
  if kind ~= 'v' then
    error(string.format('%s: the message from rank %d with tag %d is not one send_obj made', fn, source, got), 2)
  end
  return msg.decode(body)
end

return Communicator

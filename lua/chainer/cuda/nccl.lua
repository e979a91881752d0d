-- chainer.cuda.nccl: NCCL's collectives between GPUs (CuPy's cupy.cuda.nccl,
-- which Chainer's multi-GPU updaters and ChainerMN's 'pure_nccl'
-- communicator use), on device tensors.
--
--   local nccl = require 'chainer.cuda.nccl'
--   nccl.available()                 -- true, or false and why
--   nccl.get_version()               -- 22105 for NCCL 2.21.5
--   local comms = nccl.init_all({0, 1})          -- one per device of this process
--   local id = nccl.get_unique_id()  -- over processes: rank 0 makes it, all get it
--   local comm = nccl.NcclCommunicator(nranks, id, rank, device)
--   nccl.group(function()            -- several communicators from one thread
--     comms[1]:reduce(g0, out, 'sum', 0); comms[2]:reduce(g1, nil, 'sum', 0)
--   end)
--   comm:all_reduce(send, recv, 'sum')   -- also 'prod', 'max', 'min', 'avg'
--   comm:bcast(send, recv, root)         -- send on the root, recv elsewhere
--   comm:destroy()                       -- also when collected
--
-- libnccl.so.2 is loaded by the CUDA backend on first use
-- ($CHAINLUA_NCCL_LIB first); without it, or without a GPU, these fail
-- with an error that says what was looked for.  Collectives are queued on
-- the buffers' device and return without waiting for it.
local lib = require 'chainer._lib'
local T = require 'chainer.tensor'
local C, ffi, check = lib.C, lib.ffi, lib.check

local M = {}

local ID_BYTES = 128
local OPS = { sum = C.CH_NCCL_SUM, prod = C.CH_NCCL_PROD, max = C.CH_NCCL_MAX, min = C.CH_NCCL_MIN,
  avg = C.CH_NCCL_AVG }

-- available(): true when NCCL can be used; false and the reason otherwise.
function M.available()
  local v = ffi.new('int[1]')
  if C.ch_nccl_version(v) == 0 then return true end
  local why = ffi.string(C.ch_last_error())
  C.ch_clear_error()
  return false, why
end

function M.get_version()
  local v = ffi.new('int[1]')
  check(C.ch_nccl_version(v))
  return v[0]
end

-- get_unique_id(): the id that names one communicator, as a Lua string of
-- 128 bytes (sent to the other ranks, e.g. with comm:bcast_obj).
function M.get_unique_id()
  local id = ffi.new('uint8_t[?]', ID_BYTES)
  check(C.ch_nccl_unique_id(id))
  return ffi.string(id, ID_BYTES)
end

local Communicator = {}
Communicator.__index = Communicator
M.Communicator = Communicator

local function destroy_handle(h)
  if h[0] ~= nil then
    C.ch_nccl_comm_destroy(h[0])
    h[0] = nil
  end
end

local function wrap(handle, rank, size, device)
  local h = ffi.gc(ffi.new('void *[1]', handle), destroy_handle)
  return setmetatable({ _h = h, rank = rank, size = size, device = device }, Communicator)
end

local function check_int(fn, what, v, lo)
  if type(v) ~= 'number' or v ~= math.floor(v) or v < lo then
    error(string.format('%s: %s must be an integer >= %d (got %s)', fn, what, lo, tostring(v)), 3)
  end
end

-- NcclCommunicator(nranks, id, rank, device): this process's rank of a
-- communicator over nranks ranks (each calls it with the same id), on
-- `device` (default: chainer.cuda.get_current_device_id()).
function M.NcclCommunicator(nranks, id, rank, device)
  local fn = 'NcclCommunicator'
  check_int(fn, 'nranks', nranks, 1)
  check_int(fn, 'rank', rank, 0)
  if rank >= nranks then error(string.format('%s: rank %d of %d ranks is out of range', fn, rank, nranks), 2) end
  if type(id) ~= 'string' or #id ~= ID_BYTES then
    error(string.format('%s: id must be the %d-byte string of get_unique_id() (got %s)', fn, ID_BYTES,
      type(id) == 'string' and #id .. ' bytes' or type(id)), 2)
  end
  if device == nil then device = require('chainer.cuda').get_current_device_id() end
  check_int(fn, 'device', device, 0)
  local out = ffi.new('void *[1]')
  check(C.ch_nccl_comm_init_rank(out, nranks, ffi.cast('const uint8_t *', id), rank, device))
  return wrap(out[0], rank, nranks, device)
end

-- init_all(devices): one communicator per device of this process, rank k
-- on devices[k + 1] (ncclCommInitAll).
function M.init_all(devices)
  local fn = 'nccl.init_all'
  if type(devices) ~= 'table' or #devices == 0 then
    error(fn .. ': expected a list of device ids (got ' .. type(devices) .. ')', 2)
  end
  local ids = ffi.new('int[?]', #devices)
  for k, d in ipairs(devices) do
    check_int(fn, 'devices[' .. k .. ']', d, 0)
    ids[k - 1] = d
  end
  local out = ffi.new('void *[?]', #devices)
  check(C.ch_nccl_comm_init_all(out, #devices, ids))
  local comms = {}
  for k, d in ipairs(devices) do comms[k] = wrap(out[k - 1], k - 1, #devices, d) end
  return comms
end

-- group(fn): fn's collectives as one NCCL group (ncclGroupStart/End); the
-- group is closed even when fn raises.
function M.group(fn)
  check(C.ch_nccl_group_start())
  local ok, err = pcall(fn)
  local st = C.ch_nccl_group_end()
  if not ok then error(err, 0) end
  check(st)
end

local function handle(self, fn)
  local h = self._h[0]
  if h == nil then error(fn .. ': this communicator has been destroyed', 3) end
  return h
end

local function op_code(fn, op)
  local code = OPS[op or 'sum']
  if code == nil then
    error(string.format("%s: op must be 'sum', 'prod', 'max', 'min' or 'avg' (got %s)", fn, tostring(op)), 3)
  end
  return code
end

local function tensor_or_nil(fn, what, t)
  if t == nil then return nil end
  if not T.is_tensor(t) then error(string.format('%s: %s must be a tensor (got %s)', fn, what, type(t)), 3) end
  return t.ptr
end

-- all_reduce(send, recv, op): recv := op over the ranks of send (recv
-- defaults to send: in place); returns recv.
function Communicator:all_reduce(send, recv, op)
  local fn = 'nccl all_reduce'
  recv = recv or send
  check(C.ch_nccl_all_reduce(handle(self, fn), tensor_or_nil(fn, 'send', send), tensor_or_nil(fn, 'recv', recv),
    op_code(fn, op)))
  return recv
end

-- reduce(send, recv, op, root): on the root, recv := op over the ranks of
-- send; elsewhere recv may be nil.
function Communicator:reduce(send, recv, op, root)
  local fn = 'nccl reduce'
  root = root or 0
  check_int(fn, 'root', root, 0)
  check(C.ch_nccl_reduce(handle(self, fn), tensor_or_nil(fn, 'send', send), tensor_or_nil(fn, 'recv', recv),
    op_code(fn, op), root))
  return recv
end

-- bcast(send, recv, root): recv := the root's send (on the root, recv
-- defaults to send; elsewhere send may be nil); returns recv.
function Communicator:bcast(send, recv, root)
  local fn = 'nccl bcast'
  root = root or 0
  check_int(fn, 'root', root, 0)
  recv = recv or send
  check(C.ch_nccl_broadcast(handle(self, fn), tensor_or_nil(fn, 'send', send), tensor_or_nil(fn, 'recv', recv),
    root))
  return recv
end

function Communicator:destroy() destroy_handle(self._h) end

function Communicator:__tostring()
  return string.format('NCCL communicator (rank %d of %d, cuda:%d)', self.rank, self.size, self.device)
end

return M

-- chainer.cuda: the CUDA backend seen from Lua (Chainer's chainer.cuda /
-- chainer.backends.cuda).
--
-- (chainer/cuda/init.lua; user-defined kernels live beside it in
-- kernel*.lua.)  Requiring this module costs nothing: libchainlua_cuda is looked for the
-- first time something asks about CUDA (`cuda.available`, `device_count()`,
-- a Device, or a tensor allocated on 'cuda:N').  On a machine without a GPU
-- everything here still works and answers "no GPU", and the functions that
-- need one raise an error that says why (the backend's own explanation, e.g.
-- "no NVIDIA driver is installed").
local lib = require 'chainer._lib'
local C, ffi, check = lib.C, lib.ffi, lib.check

local M = {}

local probed = false
local count = 0

-- Loads the backend once; later calls are a table lookup.
local function probe()
  if not probed then
    probed = true
    count = C.ch_cuda_load(nil)
  end
  return count
end

function M.info()
  probe()
  return ffi.string(C.ch_cuda_info())
end

function M.device_count()
  return probe()
end

-- Members loaded on first access: their modules would load a costly part of
-- chainer with every `require 'chainer'` (user_kernel: ~170 KiB of live
-- heap; bench/README.md, session 12).  The table is also what Tab completion
-- lists for them (repl/complete.lua reads __index's upvalues).
local on_first_use = {
  -- chainer.backends.cuda.GpuDevice is chainer.backend's class
  GpuDevice = function() return require('chainer.backend').GpuDevice end,
  -- the functions a fused body may call (user_kernel/fusion.lua)
  fusion = function() return require('chainer.user_kernel.fusion').functions end,
}

-- `available` and `cudnn_enabled` read like Chainer's module flags but are
-- computed on first access (then stored, so later reads are plain fields).
setmetatable(M, {
  __index = function(t, k)
    if on_first_use[k] then
      local v = on_first_use[k]()
      rawset(t, k, v)
      return v
    elseif k == 'available' then
      local v = probe() > 0
      rawset(t, k, v)
      return v
    elseif k == 'cudnn_enabled' then
      -- the backend links cuDNN; it is usable whenever a GPU is
      local v = probe() > 0 and M.info():find('cuDNN %d') ~= nil
      rawset(t, k, v)
      return v
    end
    return nil
  end,
})

local function no_gpu_error(fn, id, level)
  error(string.format('%s: cuda:%d requested but no GPU is available: %s', fn, id, M.info()), level + 1)
end

local function check_id(fn, id, level)
  if type(id) ~= 'number' or id ~= math.floor(id) or id < 0 then
    error(string.format('%s: device id must be a non-negative integer, got %s', fn, tostring(id)), level + 1)
  end
  local n = probe()
  if n == 0 then no_gpu_error(fn, id, level + 1) end
  if id >= n then
    error(string.format('%s: cuda:%d requested but only %d GPU%s available (cuda:0..cuda:%d)', fn, id, n,
      n == 1 and ' is' or 's are', n - 1), level + 1)
  end
end

---------------------------------------------------------------------------
-- Device
---------------------------------------------------------------------------
local Device = {}
Device.__index = Device
M.Device = Device

-- The device that `use()` made current (Chainer's "current device");
-- kernels themselves always run on the device of their tensors.
local current = 0

local devices = {}

function M.get_device_from_id(id)
  if id == nil then id = current end
  check_id('get_device_from_id', id, 2)
  local d = devices[id]
  if not d then
    d = setmetatable({ id = id, name = 'cuda:' .. id, xp = 'cuda' }, Device)
    devices[id] = d
  end
  return d
end

function M.get_current_device_id() return current end

-- DummyDevice: Chainer's stand-in for "no GPU" (id -1; use and synchronize
-- do nothing), what get_device_from_array returns for host arrays.
local DummyDevice = setmetatable({ id = -1, name = 'DummyDevice' }, {
  __tostring = function() return 'DummyDevice' end,
})
function DummyDevice.use(self) return self end
function DummyDevice.synchronize() end
M.DummyDevice = DummyDevice
-- Chainer's class of DummyDevice (here: its metatable)
M.DummyDeviceType = getmetatable(DummyDevice)

-- get_device_from_array(a, b, ...): the CUDA device of the first argument
-- that is a tensor on a GPU, else DummyDevice (Chainer's: Variables are not
-- looked into; use v.array).
function M.get_device_from_array(...)
  local T = require 'chainer.tensor'
  for i = 1, select('#', ...) do
    local a = select(i, ...)
    if T.is_tensor(a) and a.ptr.dev >= 0 then return M.get_device_from_id(a.ptr.dev) end
  end
  return DummyDevice
end

function Device:use()
  check_id('Device:use', self.id, 2)
  current = self.id
  return self
end

function Device:synchronize()
  check(C.ch_cuda_synchronize(self.id), 2)
end

function Device.__tostring(d) return 'cuda:' .. d.id end
function Device.__eq(a, b) return a.id == b.id end


-- Waits for all queued work on every device (or on `id`).
function M.synchronize(id)
  if id ~= nil then
    check_id('synchronize', id, 2)
    check(C.ch_cuda_synchronize(id), 2)
    return
  end
  for d = 0, probe() - 1 do check(C.ch_cuda_synchronize(d), 2) end
end

---------------------------------------------------------------------------
-- the memory pool (one caching allocator per device, in C)
---------------------------------------------------------------------------
local MemoryPool = {}
MemoryPool.__index = MemoryPool
M.MemoryPool = MemoryPool

-- `device` (an id) restricts the pool to one GPU; nil covers every GPU.
local function pool_devices(self)
  if self.device then return self.device, self.device end
  return 0, probe() - 1
end

-- The sum of a per-device byte count over the pool's devices.
local function sum_over_devices(self, count)
  local a, b = pool_devices(self)
  local n = 0
  for d = a, b do n = n + tonumber(count(d)) end
  return n
end

-- Bytes held by live tensors.
function MemoryPool:used_bytes() return sum_over_devices(self, C.ch_live_bytes) end

-- Bytes of freed blocks kept for reuse.
function MemoryPool:free_bytes() return sum_over_devices(self, C.ch_cache_bytes) end

-- Everything the pool holds from the driver: used plus cached.
function MemoryPool:total_bytes() return self:used_bytes() + self:free_bytes() end

-- Returns every cached block to the driver (live tensors are untouched),
-- and the idle pinned staging buffers of the same devices.
function MemoryPool:free_all_blocks()
  local a, b = pool_devices(self)
  for d = a, b do
    C.ch_cache_free_all(d)
    C.ch_cuda_pinned_free_all(d)
  end
end

-- Bytes of pinned host memory held for staging copies (pinned_memory_pool).
function MemoryPool:pinned_bytes() return sum_over_devices(self, C.ch_cuda_pinned_bytes) end

function MemoryPool.__tostring(p)
  return string.format('MemoryPool(used=%d, free=%d)', p:used_bytes(), p:free_bytes())
end

local default_pool = setmetatable({}, MemoryPool)

-- Chainer's cuda.memory_pool (CuPy's get_default_memory_pool()).
function M.memory_pool(device)
  if device == nil then return default_pool end
  check_id('memory_pool', device, 2)
  return setmetatable({ device = device }, MemoryPool)
end
M.get_default_memory_pool = M.memory_pool

-- Raises the "no GPU" error unless a GPU is present; for code that must
-- fail early (Chainer's cuda.check_cuda_available).
function M.check_cuda_available()
  if probe() == 0 then
    error('check_cuda_available: CUDA is not available: ' .. M.info(), 2)
  end
end

---------------------------------------------------------------------------
-- moving arrays (Chainer's cuda.to_gpu / to_cpu / get_array_module), on
-- chainer.backend's Device:send
---------------------------------------------------------------------------
local function backend() return require 'chainer.backend' end

---------------------------------------------------------------------------
-- streams, events, pinned transfers and the cuDNN workspace limit
-- (chainer/cuda/stream.lua; docs/cuda.md "Streams and events")
---------------------------------------------------------------------------
local streams = require 'chainer.cuda.stream'
M.Stream, M.Event = streams.Stream, streams.Event
M.get_elapsed_time, M.using_stream, M.get_current_stream =
  streams.get_elapsed_time, streams.using_stream, streams.get_current_stream

-- Chainer's `stream` argument: nil or a cuda.Stream.
local function check_stream(fn, stream, level)
  if stream ~= nil and not streams.is_stream(stream) then
    error(string.format('%s: stream must be a cuda.Stream or nil (got %s)', fn, type(stream)), level + 1)
  end
end

-- Runs send() with Chainer's `stream` argument current (nil: as it is),
-- which must work on `device_id` (nil: any device).
local function on_stream(fn, stream, device_id, send)
  if stream == nil then return send() end
  check_stream(fn, stream, 3)
  if device_id and stream.device_id and stream.device_id ~= device_id then
    error(string.format('%s: the stream works on cuda:%d but the array goes to or comes from cuda:%d', fn,
      stream.device_id, device_id), 3)
  end
  -- the null stream is the default stream of the array's device
  local id = stream.device_id or device_id or current
  return streams.with_stream(id, stream, send)
end

-- Chainer's cuda.get_max_workspace_size / set_max_workspace_size: the most
-- workspace (bytes) a cuDNN convolution algorithm may take; 8 MiB unless
-- set.  A setting of the C runtime, kept with or without a GPU.
function M.get_max_workspace_size() return tonumber(C.ch_get_cudnn_workspace_limit()) end

function M.set_max_workspace_size(size)
  if type(size) ~= 'number' or size ~= math.floor(size) or size < 0 or size >= 2 ^ 63 then
    error('set_max_workspace_size: size must be a non-negative integer number of bytes (got ' ..
      tostring(size) .. ')', 2)
  end
  C.ch_set_cudnn_workspace_limit(size)
end

-- The pinned (page-locked) host buffers that host <-> device copies are
-- staged through (CuPy's PinnedMemoryPool; every GPU, or `device` only).
local PinnedMemoryPool = {}
PinnedMemoryPool.__index = PinnedMemoryPool
M.PinnedMemoryPool = PinnedMemoryPool

-- Bytes of pinned host memory held for staging.
function PinnedMemoryPool:total_bytes() return sum_over_devices(self, C.ch_cuda_pinned_bytes) end

-- Staging buffers not in use by a copy.
function PinnedMemoryPool:n_free_blocks() return sum_over_devices(self, C.ch_cuda_pinned_free_blocks) end

-- Hands the idle staging buffers back to the driver.
function PinnedMemoryPool:free_all_blocks()
  local a, b = pool_devices(self)
  for d = a, b do C.ch_cuda_pinned_free_all(d) end
end

function PinnedMemoryPool.__tostring(p)
  return string.format('PinnedMemoryPool(total=%d, free_blocks=%d)', p:total_bytes(), p:n_free_blocks())
end

local default_pinned_pool = setmetatable({}, PinnedMemoryPool)

-- CuPy's get_default_pinned_memory_pool(); pinned_memory_pool(id) for one GPU.
function M.pinned_memory_pool(device)
  if device == nil then return default_pinned_pool end
  check_id('pinned_memory_pool', device, 2)
  return setmetatable({ device = device }, PinnedMemoryPool)
end
M.get_default_pinned_memory_pool = M.pinned_memory_pool

-- to_gpu(array, device = the current GPU, stream): a tensor (or a number, a
-- Variable, or a table of them) on the GPU `device` (an id or a Device).
-- With `stream` (a cuda.Stream of that device) the copies are queued on it
-- and return once the host data is staged, as Chainer's asynchronous copy.
function M.to_gpu(array, device, stream)
  check_stream('to_gpu', stream, 2)
  if probe() == 0 then
    error('to_gpu: no CUDA device is available: ' .. M.info(), 2)
  end
  if device == nil then
    device = stream ~= nil and streams.is_stream(stream) and stream.device_id or current
  end
  local d = backend()._resolve(device, 'to_gpu')
  if d.id < 0 then
    error(string.format('to_gpu: device must be a GPU (got %s)', d.name), 2)
  end
  return on_stream('to_gpu', stream, d.id, function() return d:send(array) end)
end

-- to_cpu(array, stream): the same on the host (no copy for host tensors);
-- with `stream` the copies are queued on it.  Returns once the data is on
-- the host.
function M.to_cpu(array, stream)
  check_stream('to_cpu', stream, 2)
  if stream ~= nil and probe() == 0 then
    error('to_cpu: a stream was given but no CUDA device is available: ' .. M.info(), 2)
  end
  return on_stream('to_cpu', stream, nil, function() return backend().get_device('@numpy'):send(array) end)
end

function M.get_array_module(...) return backend().get_array_module(...) end

---------------------------------------------------------------------------
-- user-defined kernels (chainer/user_kernel/): the same kernel text runs
-- on CPU tensors (translated to Lua) and CUDA tensors (NVRTC)
---------------------------------------------------------------------------
local function kernels() return require 'chainer.user_kernel' end

-- Chainer's cuda.elementwise / cuda.reduce: memoized, so the same arguments
-- give the same kernel object (and its compiled code).
function M.elementwise(in_params, out_params, body, name, options)
  local K = kernels()
  return K.memoized('elementwise', K.elementwise, in_params, out_params, body, name, options)
end

function M.reduce(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name, options)
  local K = kernels()
  return K.memoized('reduce', K.reduce, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
    name, options)
end

-- CuPy's class names (not memoized).
function M.ElementwiseKernel(in_params, out_params, body, name, options)
  return kernels().elementwise(in_params, out_params, body, name or 'kernel', options)
end

function M.ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name, options)
  return kernels().reduce(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
    name or 'reduce_kernel', options)
end

-- Raw kernels and fusion (user_kernel/raw.lua, user_kernel/fusion.lua):
-- cuda.raw is memoized as Chainer's; cuda.fusion holds the functions a
-- fused body may call.
function M.raw(code, name)
  local K = kernels()
  return K.memoized('raw', require('chainer.user_kernel.raw').raw, code, name)
end
function M.RawKernel(code, name) return require('chainer.user_kernel.raw').raw(code, name) end
function M.RawModule(code) return require('chainer.user_kernel.raw').RawModule(code) end
function M.fuse(fn, options) return require('chainer.user_kernel.fusion').fuse(fn, options) end
-- M.fusion: loaded on first use (on_first_use, above)

---------------------------------------------------------------------------
-- cuDNN use decisions (Chainer's should_use_cudnn, also chainer.should_use_cudnn)
---------------------------------------------------------------------------
-- cuDNN's own version number (cudnnGetVersion: 8902 for 8.9.2, 90100 for
-- 9.1.0), -1 without cuDNN, as Chainer's _cudnn_version.
function M.cudnn_version()
  if not M.cudnn_enabled then return -1 end
  local major, minor, patch = M.info():match('cuDNN (%d+)%.(%d+)%.(%d+)')
  if not major then return -1 end
  major, minor, patch = tonumber(major), tonumber(minor), tonumber(patch)
  return (major >= 9 and major * 10000 or major * 1000) + minor * 100 + patch
end

local SHOULD_USE_CUDNN = {
  ['==always'] = { always = true, auto = false, never = false },
  ['>=auto'] = { always = true, auto = true, never = false },
}

-- should_use_cudnn(level, lowest_version = 0): whether a function should
-- take its cuDNN path: level '==always' needs config.use_cudnn == 'always',
-- '>=auto' accepts 'auto' too; false without cuDNN or below lowest_version.
function M.should_use_cudnn(level, lowest_version)
  local flags = SHOULD_USE_CUDNN[level]
  if flags == nil then
    error(string.format("should_use_cudnn: level must be '==always' or '>=auto' (got %s)", tostring(level)), 2)
  end
  if lowest_version ~= nil and type(lowest_version) ~= 'number' then
    error('should_use_cudnn: lowest_version must be a number (got ' .. type(lowest_version) .. ')', 2)
  end
  if M.cudnn_version() < (lowest_version or 0) then return false end
  return flags[require('chainer.config').config.use_cudnn]
end

local TENSOR_CORE = { always = true, auto = 'auto', never = false }

-- should_use_cudnn_tensor_core(dtype): config.use_cudnn_tensor_core, where
-- 'auto' means float16 on a GPU of compute capability 7.0 or newer with
-- cuDNN 7 or newer (CuPy's is_tensor_core_available).
function M.should_use_cudnn_tensor_core(dtype)
  local setting = require('chainer.config').config.use_cudnn_tensor_core
  local flag = TENSOR_CORE[setting]
  if flag == nil then
    error(string.format("should_use_cudnn_tensor_core: config.use_cudnn_tensor_core must be 'always', " ..
      "'auto' or 'never' (got %s)", tostring(setting)), 2)
  end
  if flag ~= 'auto' then return flag end
  local T = require 'chainer.tensor'
  local name = type(dtype) == 'string' and T.dtype_codes[dtype] and T.dtype_names[T.dtype_codes[dtype]]
  if not name then
    error('should_use_cudnn_tensor_core: dtype must be a dtype name such as \'float16\' (got ' ..
      tostring(dtype) .. ')', 2)
  end
  return name == 'float16' and M.cudnn_version() >= 7000 and C.ch_cuda_arch(current) >= 70
end

---------------------------------------------------------------------------
-- Chainer's other cuda helpers
---------------------------------------------------------------------------
M.config = require('chainer.config').config

-- get_device(arg): Chainer's deprecated form of get_device_from_id and
-- get_device_from_array: a number is
-- a device id, nil the current device, anything else an array.
function M.get_device(arg)
  if arg == nil then return M.get_device_from_id(current) end
  if type(arg) == 'number' then
    if arg < 0 then return M.DummyDevice end
    return M.get_device_from_id(arg)
  end
  return M.get_device_from_array(arg)
end

-- copy(array, {out =, out_device =}): a copy of a CUDA tensor, into `out`
-- (on any device) or onto out_device (default: the array's device).
local COPY_OPTIONS = require('chainer._args').accept { 'out', 'out_device', 'stream' }
function M.copy(array, opts)
  local args = require 'chainer._args'
  opts = args.options('cuda.copy', opts, COPY_OPTIONS)
  local T = require 'chainer.tensor'
  if not T.is_tensor(array) or array.ptr.dev < 0 then
    args.fail('cuda.copy: array must be a CUDA tensor (got ' ..
      (T.is_tensor(array) and 'a CPU tensor; use t:copy()' or type(array)) .. ')', 2)
  end
  if opts.stream ~= nil then
    local stream = opts.stream
    opts.stream = nil
    return on_stream('cuda.copy', stream, array.ptr.dev, function() return M.copy(array, opts) end)
  end
  if opts.out ~= nil then
    backend().copyto(opts.out, array)
    return opts.out
  end
  local dst = opts.out_device ~= nil and backend()._resolve(opts.out_device, 'cuda.copy') or nil
  local y = array:copy()
  if dst and dst.id ~= array.ptr.dev then y = y:to_device(dst.id) end
  return y
end

-- memoize{for_each_device = false}: a decorator that caches fn's result per
-- argument list (and per current device when asked), as Chainer's
-- cuda.memoize; clear_memo() empties every cache it made.
local function pack(...) return { n = select('#', ...), ... } end
local memo_caches = setmetatable({}, { __mode = 'k' })
local MEMOIZE_OPTIONS = require('chainer._args').accept { 'for_each_device' }
function M.memoize(opts)
  opts = require('chainer._args').options('cuda.memoize', opts, MEMOIZE_OPTIONS)
  local per_device = opts.for_each_device == true
  return function(fn)
    if type(fn) ~= 'function' then
      error('cuda.memoize: the decorated value must be a function (got ' .. type(fn) .. ')', 2)
    end
    local cache = {}
    memo_caches[cache] = true
    return function(...)
      local n = select('#', ...)
      local parts = { per_device and current or '' }
      for i = 1, n do
        local a = select(i, ...)
        local ta = type(a)
        if ta ~= 'number' and ta ~= 'string' and ta ~= 'boolean' and ta ~= 'nil' then
          error('cuda.memoize: arguments must be numbers, strings, booleans or nil (argument ' .. i ..
            ' is a ' .. ta .. ')', 2)
        end
        parts[#parts + 1] = ta .. ':' .. tostring(a)
      end
      local key = table.concat(parts, '\0')
      local hit = cache[key]
      if hit == nil then
        hit = pack(fn(...))
        cache[key] = hit
      end
      return unpack(hit, 1, hit.n)
    end
  end
end

function M.clear_memo()
  for cache in pairs(memo_caches) do
    for k in pairs(cache) do cache[k] = nil end
  end
end

return M

-- chainer.backend: Chainer 7's device objects and the helpers around them
-- (get_device, using_device, get_array_module, get_device_from_array,
-- copyto), on chainlua's two kinds of memory: the host ('@numpy', chainlua's
-- 'cpu', id -1) and a CUDA GPU ('@cupy:N', chainlua's 'cuda:N', id N).
--
-- Every device has the same `xp`, chainer.tensor: its functions and methods
-- run on whichever device holds their tensors.  A Device carries `id`, so it
-- can be given wherever chainlua takes a device (t:to_device(d),
-- link:to_device(d), T.zeros(shape, dtype, d)).  The GPU side needs the
-- CUDA backend (lua/chainer/cuda); without a GPU, asking for '@cupy:N' is an
-- error that says why.
local class = require 'chainer.class'
local T = require 'chainer.tensor'
local args = require 'chainer._args'

local M = {}

local function cuda() return require 'chainer.cuda' end

local function is_variable(v) return type(v) == 'table' and v._is_variable == true end

---------------------------------------------------------------------------
-- Device, CpuDevice, GpuDevice
---------------------------------------------------------------------------
local Device = class.Object:extend('Device')
M.Device = Device

-- Devices are equal when they are the same memory (Chainer's __eq__);
-- defined here, before the subclasses copy it, so that a CpuDevice and a
-- GpuDevice compare with the same function.
function Device.__eq(a, b) return a.id == b.id end
function Device.__tostring(d) return d.name end

-- Moves arrays to this device: a tensor (no copy when it is already here),
-- a number (a 0-d tensor, as Chainer's numpy.asarray), a Variable (moved in
-- place, data and gradient, and returned), nil, or a Lua table of these
-- (a new table with the same keys; one object met twice is moved once).
function Device:send(arrays)
  local seen = {}
  local id = self.id
  local function send(x, path)
    if x == nil then return nil end
    if T.is_tensor(x) then
      if x.ptr.dev == id then return x end
      return x:to_device(id)
    end
    if type(x) == 'number' or type(x) == 'boolean' then
      local t = T.array(x)
      if id ~= -1 then t = t:to_device(id) end
      return t
    end
    if is_variable(x) then
      x:to_device(id)
      return x
    end
    if type(x) == 'table' and getmetatable(x) == nil then
      if seen[x] then return seen[x] end
      local out = {}
      seen[x] = out
      for k, v in pairs(x) do out[k] = send(v, path .. '[' .. tostring(k) .. ']') end
      return out
    end
    local what = type(x) == 'table' and x._is_link and 'a Link (use link:to_device(device))' or type(x)
    args.fail(string.format('send to %s: %s must be a tensor, a number, a Variable, nil or a table of them (got %s)',
      self.name, path, what), 2)
  end
  return send(arrays, 'arrays')
end

-- Chainer's is_array_supported: whether x is an array this device holds.
function Device:is_array_supported(x)
  return T.is_tensor(x) and x.ptr.dev == self.id
end

local CpuDevice = Device:extend('CpuDevice')
M.CpuDevice = CpuDevice

function CpuDevice:init()
  self.id = -1
  self.name = '@numpy'
  self.xp = T
end

-- The host needs no selecting (Chainer's CpuDevice.use is a no-op).
function CpuDevice:use() return self end

local GpuDevice = Device:extend('GpuDevice')
M.GpuDevice = GpuDevice

function GpuDevice:init(id)
  self.id = id
  self.name = '@cupy:' .. id
  self.xp = T
  -- the CUDA backend's own device object (chainer.cuda.Device: synchronize)
  self.device = cuda().get_device_from_id(id)
end

-- Makes this GPU the current one (chainer.cuda's current device).
function GpuDevice:use()
  self.device:use()
  return self
end

function GpuDevice:synchronize() self.device:synchronize() end

local cpu_device
local gpu_devices = {}

local function the_cpu()
  if not cpu_device then cpu_device = CpuDevice() end
  return cpu_device
end

-- Errors blame the user's line (chainer._args.fail).
local function the_gpu(id, fn)
  local d = gpu_devices[id]
  if d then return d end
  local ok, err = pcall(cuda().get_device_from_id, id)
  if not ok then
    local why = tostring(err):gsub('^get_device_from_id: cuda:%d+ requested but ', '')
    args.fail(string.format('%s: @cupy:%d (cuda:%d) asked for, but %s', fn, id, id, why), 2)
  end
  d = GpuDevice(id)
  gpu_devices[id] = d
  return d
end

---------------------------------------------------------------------------
-- get_device(spec)
---------------------------------------------------------------------------
local SPECS = "'@numpy', 'cpu', -1, '@cupy:N', 'cuda:N', N (an integer >= 0) or a Device"

local function bad_spec(fn, spec, why)
  local shown = type(spec) == 'string' and string.format('%q', spec) or tostring(spec)
  args.fail(string.format('%s: %s is not a device%s (expected %s)', fn, shown, why or '', SPECS), 2)
end

-- The Device a spec names; `fn` names the caller in errors.
local function resolve(spec, fn)
  if class.isinstance(spec, Device) then return spec end
  if type(spec) == 'number' then
    if spec == -1 then return the_cpu() end
    if spec >= 0 and spec == math.floor(spec) then return the_gpu(spec, fn) end
    bad_spec(fn, spec, ': a device number is -1 (the CPU) or a GPU id >= 0')
  end
  if type(spec) == 'string' then
    if spec == '@numpy' or spec == 'cpu' or spec == '-1' then return the_cpu() end
    local n = spec:match('^@cupy:(.*)$') or spec:match('^cuda:(.*)$')
    if n == nil and spec:match('^%d+$') then n = spec end
    if n ~= nil then
      if not n:match('^%d+$') then bad_spec(fn, spec, ': the GPU id after the colon must be an integer') end
      return the_gpu(tonumber(n), fn)
    end
    if spec == '@intel64' then bad_spec(fn, spec, ' in chainlua: iDeep (Intel64) is not supported') end
    if spec:match('^native') then
      bad_spec(fn, spec, " in chainlua: ChainerX is not supported (its CPU is 'cpu')")
    end
    bad_spec(fn, spec, nil)
  end
  if spec == nil then bad_spec(fn, spec, ': no device given') end
  bad_spec(fn, spec, ' (a ' .. type(spec) .. ')')
end
M._resolve = resolve

function M.get_device(spec) return resolve(spec, 'get_device') end

---------------------------------------------------------------------------
-- using_device(spec, fn)
---------------------------------------------------------------------------
local current = nil   -- the device of the innermost using_device scope

local function finish(old, old_gpu, ok, ...)
  current = old
  if old_gpu ~= nil then cuda().get_device_from_id(old_gpu):use() end
  if not ok then error((...), 0) end
  return ...
end

-- Runs fn with `spec`'s device current (for a GPU: chainer.cuda's current
-- device, restored afterwards, also when fn raises); returns what fn
-- returns.  The host needs no selecting, so for '@numpy' only
-- get_current_device() changes.
function M.using_device(spec, fn)
  local device = resolve(spec, 'using_device')
  if type(fn) ~= 'function' then
    error("using_device: pass the scope as a function: chainer.using_device(device, function() ... end)", 2)
  end
  local old, old_gpu = current, nil
  if device.id >= 0 then
    old_gpu = cuda().get_current_device_id()
    device:use()
  end
  current = device
  return finish(old, old_gpu, pcall(fn))
end

-- The device of the innermost using_device scope (the CPU outside any).
function M.get_current_device() return current or the_cpu() end

---------------------------------------------------------------------------
-- arrays
---------------------------------------------------------------------------
-- Chainer's get_array_module(*args): the module whose functions work on
-- these arrays.  chainer.tensor serves every device, so it is always that.
function M.get_array_module(...) return T end

-- The device holding a tensor or a Variable's data; the CPU for anything
-- else (nil, numbers), as Chainer.
function M.get_device_from_array(x)
  if is_variable(x) then x = x.array end
  if T.is_tensor(x) then
    local id = x.ptr.dev
    if id == -1 then return the_cpu() end
    return the_gpu(id, 'get_device_from_array')
  end
  return the_cpu()
end

-- is_arrays_compatible(arrays): whether one kind of memory holds every
-- tensor of the list (all on the host, or all on CUDA GPUs), as Chainer's
-- check that one array module serves them; nil entries are skipped, and
-- anything that is not a tensor (a Variable, a number) makes it false.
function M.is_arrays_compatible(arrays)
  if type(arrays) ~= 'table' or T.is_tensor(arrays) then
    error(string.format('is_arrays_compatible: arrays must be a list of tensors (got %s)',
      T.is_tensor(arrays) and 'a tensor' or type(arrays)), 2)
  end
  local on_gpu
  for i = 1, table.maxn(arrays) do
    local a = arrays[i]
    if a ~= nil then
      if not T.is_tensor(a) then return false end
      local gpu = a.ptr.dev >= 0
      if on_gpu == nil then on_gpu = gpu elseif on_gpu ~= gpu then return false end
    end
  end
  return true
end

-- NumPy's 'same_kind' casting, which Chainer's copyto keeps: no float into
-- an integer or bool, no integer into bool.
local function kind(dtype)
  if dtype == 'bool' then return 0 end
  if T.is_float_dtype(dtype) then return 2 end
  return 1
end

-- copyto(dst, src): copies src (a tensor of dst's shape or one that
-- broadcasts to it, or a number) into the tensor dst, across devices.
function M.copyto(dst, src)
  if not T.is_tensor(dst) then
    error(string.format('copyto: dst must be a tensor (got %s)', is_variable(dst) and 'a Variable' or type(dst)), 2)
  end
  if type(src) == 'number' or type(src) == 'boolean' then
    dst:fill_(src)
    return
  end
  if not T.is_tensor(src) then
    error(string.format('copyto: src must be a tensor or a number (got %s)', is_variable(src) and 'a Variable' or
      type(src)), 2)
  end
  if kind(src.dtype) > kind(dst.dtype) then
    error(string.format("copyto: cannot copy %s into %s under the 'same_kind' rule (cast src first)", src.dtype,
      dst.dtype), 2)
  end
  local ok, err = pcall(dst.copy_, dst, src)
  if not ok then error('copyto: ' .. tostring(err):gsub('^.-copy_into: ', ''), 2) end
end

return M

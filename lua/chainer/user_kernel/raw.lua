-- chainer.user_kernel.raw: raw CUDA kernels (CuPy's RawKernel and
-- RawModule, Chainer's cuda.raw): CUDA C source with an
-- `extern "C" __global__` function, compiled by NVRTC on the same path as
-- cuda.elementwise (cuda_backend.lua: disk and memory caches) and launched
-- by hand with the caller's grid, block and arguments:
--
--   local k = cuda.raw(src, 'scale')
--   k({blocks}, {threads}, {x, y, {'float32', 2.5}, {'int32', n}}, {shared_mem = 0})
--
-- Arguments: a CUDA tensor passes the device address of its first element
-- (it must be contiguous: the kernel sees flat C-order memory); a number
-- passes by value with the C type named next to it, {'int32', n}, since a
-- Lua number alone does not say which of the kernel's scalar types it is.
-- Unlike elementwise kernels there is no CPU path: the body is any CUDA.
local ffi = require 'ffi'
local lib = require 'chainer._lib'
local T = require 'chainer.tensor'
local KC = require 'chainer.user_kernel.cuda_backend'
local args_layer = require 'chainer._args'

local M = {}

local RAW_CALL_OPTIONS = args_layer.accept { 'shared_mem' }

-- The scalar types an argument may name, as FFI types, with the range an
-- integer value must fit.
local scalar_ctypes = { bool = 'bool', int8 = 'int8_t', uint8 = 'uint8_t', int16 = 'int16_t',
  uint16 = 'uint16_t', int32 = 'int32_t', uint32 = 'uint32_t', int64 = 'int64_t', uint64 = 'uint64_t',
  float32 = 'float', float64 = 'double' }
local int_ranges = { int8 = { -2 ^ 7, 2 ^ 7 - 1 }, uint8 = { 0, 2 ^ 8 - 1 }, int16 = { -2 ^ 15, 2 ^ 15 - 1 },
  uint16 = { 0, 2 ^ 16 - 1 }, int32 = { -2 ^ 31, 2 ^ 31 - 1 }, uint32 = { 0, 2 ^ 32 - 1 },
  int64 = { -2 ^ 63, 2 ^ 63 - 1 }, uint64 = { 0, 2 ^ 64 - 1 } }
local TYPE_LIST = 'bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32, float64'

local function kerr(name, fmt, ...)
  args_layer.fail(string.format('kernel %s: ' .. fmt, name, ...), 3)
end

local function describe(v)
  if T.is_tensor(v) then return 'a tensor' end
  return type(v)
end

-- grid or block: a positive integer or a list of 1 to 3 of them.
local function dims3(name, what, v)
  local list = type(v) == 'number' and { v } or v
  if type(list) ~= 'table' or T.is_tensor(list) or #list < 1 or #list > 3 then
    kerr(name, '%s must be a number or a list of 1 to 3 numbers (got %s)', what, describe(v))
  end
  local out = ffi.new('uint32_t[3]', 1, 1, 1)
  for j = 1, #list do
    local d = list[j]
    if type(d) ~= 'number' or d ~= math.floor(d) or d < 0 or d > 2 ^ 31 - 1 then
      kerr(name, '%s[%d] must be a non-negative integer below 2^31 (got %s)', what, j, tostring(d))
    end
    out[j - 1] = d
  end
  return out
end

-- One kernel argument as a cdata box (its address goes into the launch's
-- argument array); `device` is the launch device so far (nil before the
-- first tensor).  Returns the box and the device.
local function pack_arg(name, k, a, device)
  if T.is_tensor(a) then
    local dev = a.ptr.dev
    if dev < 0 then
      kerr(name, 'args[%d] is a CPU tensor: a raw kernel takes CUDA tensors (send it with to_gpu())', k)
    end
    if device ~= nil and dev ~= device then
      kerr(name, 'args[%d] is on %s but an earlier tensor is on %s (all tensors must be on one device)', k,
        T.device_name(dev), T.device_name(device))
    end
    if not a.is_contiguous then
      kerr(name, 'args[%d] is not contiguous: a raw kernel sees flat C-order memory (pass t:contiguous())', k)
    end
    local p = a.ptr
    return ffi.new('void*[1]', ffi.cast('char*', p.data) + p.offset * a.itemsize), dev
  end
  if type(a) == 'table' then
    local ty, v = a[1], a[2]
    local ct = scalar_ctypes[ty]
    if not ct or #a ~= 2 then
      kerr(name, "args[%d] must be {type, value} with a type among %s (got {%s, %s})", k, TYPE_LIST,
        tostring(ty), tostring(v))
    end
    if ty == 'bool' then
      if type(v) ~= 'boolean' then kerr(name, 'args[%d] is bool: its value must be true or false (got %s)', k, type(v)) end
      return ffi.new('bool[1]', v), device
    end
    if type(v) ~= 'number' then kerr(name, 'args[%d] is %s: its value must be a number (got %s)', k, ty, type(v)) end
    local range = int_ranges[ty]
    if range and (v ~= math.floor(v) or v < range[1] or v > range[2]) then
      kerr(name, 'args[%d] = %s does not fit %s', k, tostring(v), ty)
    end
    return ffi.new(ct .. '[1]', v), device
  end
  if type(a) == 'number' or type(a) == 'boolean' then
    kerr(name, "args[%d] is a Lua %s: give its C type, e.g. {'int32', %s} or {'float32', %s}", k, type(a),
      tostring(a), tostring(a))
  end
  kerr(name, 'args[%d] must be a CUDA tensor or {type, value} (got %s)', k, describe(a))
end

---------------------------------------------------------------------------
-- RawKernel
---------------------------------------------------------------------------
local RawKernel = {}
RawKernel.__index = RawKernel

local function check_source(what, code, name)
  if type(code) ~= 'string' then
    args_layer.fail(string.format('%s: code must be a string of CUDA source (got %s)', what, type(code)), 3)
  end
  if name ~= nil and (type(name) ~= 'string' or not name:match('^[%a_][%w_]*$')) then
    args_layer.fail(string.format('%s: name must be the identifier of an extern "C" __global__ function ' ..
      '(got %s)', what, tostring(name)), 3)
  end
end

-- raw(code, name): `name` is the extern "C" __global__ function to launch.
function M.raw(code, name)
  check_source('cuda.raw', code, name)
  if name == nil then args_layer.fail('cuda.raw: name is required (the __global__ function to launch)', 2) end
  return setmetatable({ code = code, name = name }, RawKernel)
end

-- The compiled image for `arch` (default: the newest virtual architecture
-- NVRTC targets, i.e. PTX): checks the source without a GPU.  A PTX image
-- must define the entry `name` (a cubin is checked when it is loaded).
function RawKernel:compile(arch)
  if arch == nil then
    local newest = KC.nvrtc_arch()
    if newest == 0 then
      kerr(self.name, 'cannot compile: the CUDA backend or NVRTC is not available (%s)', require('chainer.cuda').info())
    end
    arch = 'compute_' .. newest
  end
  local img = KC.image(self.code, self.name, arch)
  if arch:match('^compute_') and not img:find('%.entry%s+' .. self.name .. '%s*%(') then
    kerr(self.name, 'the source defines no extern "C" __global__ function named %s', self.name)
  end
  return img
end

-- kernel(grid, block, args[, {shared_mem = bytes}])
function RawKernel:__call(grid, block, args, opts)
  local name = self.name
  opts = args_layer.options('kernel ' .. name, opts, RAW_CALL_OPTIONS)
  local g, b = dims3(name, 'grid', grid), dims3(name, 'block', block)
  local shmem = opts.shared_mem or 0
  if type(shmem) ~= 'number' or shmem ~= math.floor(shmem) or shmem < 0 or shmem > 2 ^ 32 - 1 then
    kerr(name, 'shared_mem must be a non-negative integer number of bytes (got %s)', tostring(shmem))
  end
  if type(args) ~= 'table' or T.is_tensor(args) then
    kerr(name, 'args must be a list of the kernel arguments (got %s)', describe(args))
  end
  local n = 0
  for k in pairs(args) do
    if type(k) ~= 'number' then kerr(name, 'args must be a list (it has the key %s)', tostring(k)) end
    n = math.max(n, k)
  end
  local boxes, device = {}, nil
  for k = 1, n do
    if args[k] == nil then kerr(name, 'args[%d] is nil', k) end
    boxes[k], device = pack_arg(name, k, args[k], device)
  end
  local cuda = require 'chainer.cuda'
  if not cuda.available then kerr(name, 'cannot launch: no usable GPU (%s)', cuda.info()) end
  device = device or cuda.get_current_device_id()
  local fn = KC.kernel(self.code, name, device)
  local argv = ffi.new('void*[?]', math.max(n, 1))
  for k = 1, n do argv[k - 1] = ffi.cast('void*', boxes[k]) end
  lib.check(lib.C.ch_cuda_launch_grid(device, fn, g, b, shmem, argv), 2)
end

function RawKernel:__tostring() return 'RawKernel ' .. self.name end

---------------------------------------------------------------------------
-- RawModule: one source, several kernels
---------------------------------------------------------------------------
local RawModule = {}
RawModule.__index = RawModule

function M.RawModule(code)
  check_source('cuda.RawModule', code)
  return setmetatable({ code = code }, RawModule)
end

-- The kernel `name` of this module (its kernels share one image: the disk
-- cache gives it to the second one without compiling again).
function RawModule:get_function(name)
  check_source('RawModule:get_function', self.code, name)
  if name == nil then args_layer.fail('RawModule:get_function: name is required', 2) end
  return setmetatable({ code = self.code, name = name }, RawKernel)
end

function RawModule:__tostring() return 'RawModule' end

return M

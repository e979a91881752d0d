-- The CUDA backend's build and loading, on any machine.  On this project's
-- CI machine (nvcc and cuDNN, no GPU, no driver) the backend builds, loads,
-- and reports "no GPU" with the reason; everything else must keep working.
local T = require 'chainer.tensor'
local cuda = require 'chainer.cuda'
local lib = require 'chainer._lib'
local err_of = require('helpers').err_of
local C, ffi = lib.C, lib.ffi

local function build_dir()
  local b = os.getenv('CHAINLUA_BUILD')
  if b and b ~= '' then return b end
  local l = os.getenv('CHAINLUA_LIB')
  return l and l:match('^(.*)/[^/]*$') or 'build'
end

local function exists(p)
  local f = io.open(p, 'rb')
  if f then f:close() return true end
  return false
end

local backend = build_dir() .. '/libchainlua_cuda.so'
local has_backend = exists(backend)
local gpu = cuda.device_count() > 0

describe('cuda loader', function()
  it('requires without touching the backend and answers the flags', function()
    assert.is_table(cuda)
    assert.is_boolean(cuda.available)
    assert.is_boolean(cuda.cudnn_enabled)
    assert.are.equal(cuda.available, C.ch_cuda_available() ~= 0)
    assert.is_string(cuda.info())
    assert.is_true(#cuda.info() > 0)
  end)

  it('is chainer.cuda when the chainer module is loaded', function()
    local ok, chainer = pcall(require, 'chainer')
    if ok and chainer.cuda ~= nil then assert.are.equal(cuda, chainer.cuda) end
  end)

  describe('the built backend library', function()
    if not has_backend then
      pending('no libchainlua_cuda.so in ' .. build_dir() .. ' (built only where nvcc and cuDNN exist)')
      return
    end

    it('exports exactly chainlua_cuda_init', function()
      local f = assert(io.popen('nm -D --defined-only "' .. backend .. '" 2>/dev/null'))
      local out = f:read('*a'); f:close()
      if out == '' then pending('nm not available') return end
      local names = {}
      for name in out:gmatch('%x+ T ([%w_]+)') do names[#names + 1] = name end
      assert.are.same({ 'chainlua_cuda_init' }, names)
    end)

    it('does not need libcudart.so (the CUDA runtime is linked statically)', function()
      local f = assert(io.popen('readelf -d "' .. backend .. '" 2>/dev/null'))
      local out = f:read('*a'); f:close()
      if out == '' then pending('readelf not available') return end
      assert.is_nil(out:find('libcudart', 1, true))
      assert.is_not_nil(out:find('libcublas', 1, true))
      assert.is_not_nil(out:find('libcudnn', 1, true))
    end)

    it('loads through ch_cuda_load and reports the library versions', function()
      local n = C.ch_cuda_load(backend)
      local info = ffi.string(C.ch_cuda_info())
      assert.are.equal(cuda.device_count(), n)
      assert.matches('CUDA runtime %d+%.%d+', info)
      assert.matches('cuDNN %d+%.%d+%.%d+', info)
      assert.matches('cuBLAS %d+%.%d+', info)
      if n == 0 then
        assert.matches('no usable GPU', info)
        assert.matches('no CUDA device: ', info)
      else
        assert.matches('cuda:0 .+%(sm_%d+', info)
      end
    end)

    it('says why when loading a library that is not a backend', function()
      local n = C.ch_cuda_load(build_dir() .. '/libchainlua.so')
      assert.are.equal(0, n)
      assert.matches('chainlua_cuda_init missing', ffi.string(C.ch_cuda_info()))
      -- a later good load works again
      assert.are.equal(cuda.device_count(), C.ch_cuda_load(backend))
    end)

    it('says why when the path does not exist', function()
      assert.are.equal(0, C.ch_cuda_load('/nonexistent/libchainlua_cuda.so'))
      assert.matches('CUDA backend not loaded: .*nonexistent', ffi.string(C.ch_cuda_info()))
      C.ch_cuda_load(backend)
    end)
  end)

  describe('without a GPU', function()
    if gpu then
      pending('this machine has a GPU; see gpu_spec.lua')
      return
    end

    it('is not available and counts no device', function()
      assert.is_false(cuda.available)
      assert.is_false(cuda.cudnn_enabled)
      assert.are.equal(0, cuda.device_count())
      assert.are.equal(0, C.ch_cuda_device_count())
    end)

    it('get_device_from_id names the device and the reason', function()
      local ok, err = pcall(function() local d = cuda.get_device_from_id(0); return d end)
      assert.is_false(ok)
      assert.matches('get_device_from_id: cuda:0 requested but no GPU is available: ', err, 1, true)
      assert.is_not_nil(err:find(cuda.info(), 1, true))
      -- the error blames the caller's line, not cuda.lua
      assert.matches('loader_spec.lua', err, 1, true)
    end)

    it('rejects bad device ids before looking for a GPU', function()
      assert.matches('device id must be a non%-negative integer, got %-1', err_of(cuda.get_device_from_id, -1))
      local ok, err = pcall(cuda.get_device_from_id, 1.5)
      assert.is_false(ok)
      assert.matches('got 1.5', err, 1, true)
    end)

    it('allocating on cuda:0 raises a clear Lua error', function()
      for _, f in ipairs({
        function() return T.zeros({ 2, 3 }, 'float32', 'cuda:0') end,
        function() return T.empty({ 4 }, 'int64', 0) end,
        function() return T.array({ 1, 2, 3 }):to_device('cuda:0') end,
        function() return T.array({ 1, 2, 3 }):to_gpu() end,
      }) do
        local ok, err = pcall(f)
        assert.is_false(ok)
        assert.matches('cuda:0', err, 1, true)
        assert.matches('not available', err, 1, true)
      end
    end)

    it('synchronize fails with the reason', function()
      local ok, err = pcall(cuda.synchronize, 0)
      assert.is_false(ok)
      assert.matches('no GPU is available', err, 1, true)
      assert.are.equal(4, tonumber(C.ch_cuda_synchronize(0)))  -- CH_ERR_DEVICE
      assert.matches('synchronize: the CUDA backend is not available', ffi.string(C.ch_last_error()), 1, true)
      -- over no devices, synchronising everything is a no-op
      assert.has_no.errors(function() cuda.synchronize() end)
    end)

    it('check_cuda_available raises, memory_pool answers zeros', function()
      assert.has_error(function() cuda.check_cuda_available() end)
      local pool = cuda.memory_pool()
      assert.are.equal(pool, cuda.memory_pool())
      assert.are.equal(0, pool:used_bytes())
      assert.are.equal(0, pool:free_bytes())
      assert.are.equal(0, pool:total_bytes())
      assert.has_no.errors(function() pool:free_all_blocks() end)
      assert.matches('MemoryPool%(used=0, free=0%)', tostring(pool))
      local ok, err = pcall(cuda.memory_pool, 0)
      assert.is_false(ok)
      assert.matches('memory_pool: cuda:0 requested but no GPU', err, 1, true)
    end)

    it('CPU tensors keep working after the failed GPU requests', function()
      local x = T.array({ 1, 2, 3, 4 }, 'float64')
      assert.are.same({ 1, 2, 3, 4 }, x:copy():tolist())
      assert.are.equal('cpu', x:to_cpu().device)
    end)
  end)
end)

-- cuda.raw (RawKernel / RawModule) without a GPU: argument checks (they
-- come before any launch), the compile of the source to PTX with NVRTC
-- where the CUDA backend is present, and the error without a GPU.
local T = require 'chainer.tensor'
local cuda = require 'chainer.cuda'
local KC = require 'chainer.user_kernel.cuda_backend'
local err_of = require('helpers').err_of

local SAXPY = [[
extern "C" __global__ void saxpy(const float *x, float *y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
]]

describe('cuda.raw: arguments', function()
  local k = cuda.raw(SAXPY, 'saxpy')

  it('is memoized like Chainer: the same source and name give the same kernel', function()
    assert.are.equal(k, cuda.raw(SAXPY, 'saxpy'))
    assert.are_not.equal(k, cuda.RawKernel(SAXPY, 'saxpy'))
    assert.are.equal('RawKernel saxpy', tostring(k))
  end)

  it('refuses a bad source or name', function()
    assert.matches('cuda.raw: code must be a string of CUDA source %(got number%)', err_of(cuda.raw, 3, 'k'))
    assert.matches('cuda.raw: name is required', err_of(cuda.raw, SAXPY))
    assert.matches('name must be the identifier of an extern "C" __global__ function %(got 2x%)',
      err_of(cuda.raw, SAXPY, '2x'))
  end)

  it('names the argument that is wrong', function()
    local x = T.ones(4, 'float32')
    assert.matches('kernel saxpy: args%[1%] is a CPU tensor: a raw kernel takes CUDA tensors',
      err_of(k, 1, 4, { x, x, { 'float32', 2 }, { 'int32', 4 } }))
    assert.matches("kernel saxpy: args%[3%] is a Lua number: give its C type, e.g. {'int32', 2}",
      err_of(k, 1, 4, { { 'float32', 1 }, { 'float32', 1 }, 2, { 'int32', 4 } }))
    assert.matches('args%[2%] must be {type, value} with a type among bool, int8',
      err_of(k, 1, 4, { { 'float32', 1 }, { 'half', 1 } }))
    assert.matches('args%[1%] = 3000000000 does not fit int32', err_of(k, 1, 4, { { 'int32', 3e9 } }))
    assert.matches('args%[1%] = 1.5 does not fit int64', err_of(k, 1, 4, { { 'int64', 1.5 } }))
    assert.matches('args%[1%] = %-1 does not fit uint8', err_of(k, 1, 4, { { 'uint8', -1 } }))
    assert.matches('args%[1%] is float32: its value must be a number %(got string%)',
      err_of(k, 1, 4, { { 'float32', 'x' } }))
    assert.matches('args%[1%] is bool: its value must be true or false', err_of(k, 1, 4, { { 'bool', 1 } }))
    assert.matches('args%[2%] is nil', err_of(k, 1, 4, { { 'int32', 1 }, nil, { 'int32', 1 } }))
    assert.matches('args must be a list of the kernel arguments %(got a tensor%)', err_of(k, 1, 4, x))
    assert.matches('args%[1%] must be a CUDA tensor or {type, value} %(got string%)', err_of(k, 1, 4, { 'x' }))
  end)

  it('checks grid, block and shared_mem', function()
    local a = { { 'int32', 1 } }
    assert.matches('kernel saxpy: grid must be a number or a list of 1 to 3 numbers %(got table%)',
      err_of(k, { 1, 1, 1, 1 }, 4, a))
    assert.matches('block%[2%] must be a non%-negative integer below 2%^31 %(got 0.5%)', err_of(k, 1, { 4, 0.5 }, a))
    assert.matches('grid must be a number or a list of 1 to 3 numbers %(got string%)', err_of(k, '1', 4, a))
    assert.matches('shared_mem must be a non%-negative integer number of bytes %(got %-4%)',
      err_of(k, 1, 4, a, { shared_mem = -4 }))
    assert.matches("kernel saxpy: unknown option 'stream' %(accepted: shared_mem%)",
      err_of(k, 1, 4, a, { stream = 0 }))
  end)

  it('says that it needs a GPU when there is none', function()
    if cuda.available then pending('a GPU is present: the launch runs in raw_gpu_spec') return end
    assert.matches('kernel saxpy: cannot launch: no usable GPU', err_of(k, 1, 4, { { 'float32', 1 } }))
    -- and so does the C entry point under it
    local ffi, C = require 'ffi', require('chainer._lib').C
    local dims = ffi.new('uint32_t[3]', 1, 1, 1)
    assert.are_not.equal(0, C.ch_cuda_launch_grid(0, ffi.cast('void*', 1), dims, dims, 0, nil))
    assert.matches('kernel launch: the CUDA backend is not available',
      ffi.string(C.ch_last_error()))
    assert.are_not.equal(0, C.ch_cuda_launch_grid(0, nil, dims, dims, 0, nil))
    assert.matches('ch_cuda_launch_grid: NULL argument', ffi.string(C.ch_last_error()))
  end)
end)

describe('cuda.raw: NVRTC compile (no GPU needed)', function()
  local newest = KC.nvrtc_arch()

  it('compiles the source to PTX with the named entry', function()
    if newest == 0 then
      assert.matches('kernel saxpy: cannot compile: the CUDA backend or NVRTC is not available',
        err_of(function() return cuda.RawKernel(SAXPY, 'saxpy'):compile() end))
      return
    end
    local ptx = cuda.RawKernel(SAXPY, 'saxpy'):compile()
    assert.matches('.entry saxpy(', ptx, 1, true)
    assert.matches('.param .f32 saxpy_param_2', ptx, 1, true)
  end)

  it('shows NVRTC log with the kernel name for a compile error', function()
    if newest == 0 then pending('no CUDA backend or NVRTC here: ' .. cuda.info()) return end
    local bad = cuda.RawKernel('extern "C" __global__ void broken(float *y) { y[0] = undefined_name; }', 'broken')
    local e = err_of(function() return bad:compile() end)
    assert.matches('kernel broken: NVRTC could not compile the CUDA source', e, 1, true)
    assert.matches('undefined_name', e, 1, true)
    assert.matches('identifier "undefined_name" is undefined', e, 1, true)
  end)

  it('says when the source has no function of that name', function()
    if newest == 0 then pending('no CUDA backend or NVRTC here: ' .. cuda.info()) return end
    local e = err_of(function() return cuda.RawKernel(SAXPY, 'sax'):compile() end)
    assert.matches('kernel sax: the source defines no extern "C" __global__ function named sax', e, 1, true)
  end)

  it('RawModule: several kernels from one source', function()
    local mod = cuda.RawModule(SAXPY .. [[
extern "C" __global__ void fill(float *y, float v, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = v;
}
]])
    local fill = mod:get_function('fill')
    assert.are.equal('RawKernel fill', tostring(fill))
    assert.matches('RawModule:get_function: name is required', err_of(mod.get_function, mod))
    assert.matches("cuda.RawModule: code must be a string", err_of(cuda.RawModule, nil))
    if newest == 0 then return end
    assert.matches('.entry fill(', fill:compile(), 1, true)
    assert.matches('.entry saxpy(', mod:get_function('saxpy'):compile(), 1, true)
  end)
end)

-- User-defined kernels on a real GPU: every kernel runs on CUDA tensors and
-- on the same values on the CPU, and the two must agree (the CPU evaluates
-- float32 arithmetic in double precision, hence the tolerance).  Tagged
-- `gpu`: scripts/run-tests excludes it when chainer.cuda.available is false.
local T = require 'chainer.tensor'
local cuda = require 'chainer.cuda'
local KC = require 'chainer.user_kernel.cuda_backend'

local function agree(gpu, cpu, tol)
  assert.are.equal('cuda:0', gpu.device)
  assert.are.same(cpu.shape, gpu.shape)
  assert.are.equal(cpu.dtype, gpu.dtype)
  local a = gpu:to_cpu():astype('float64'):flatten():totable()
  local b = cpu:astype('float64'):flatten():totable()
  for j = 1, #b do
    local ok = math.abs(a[j] - b[j]) <= (tol or 1e-5) * (1 + math.abs(b[j])) or (a[j] ~= a[j] and b[j] ~= b[j])
    assert(ok, string.format('element %d: GPU %s, CPU %s', j, a[j], b[j]))
  end
end

describe('user kernels on a GPU #gpu', function()
  if require('cuda.helpers').without_gpu('user-kernel') then return end
  local dev = 'cuda:0'
  it('elementwise: broadcasting, scalars, strided views and several outputs', function()
    local k = cuda.elementwise('T x, T y, float32 alpha', 'T z, int32 c',
      'T t = x > 0 ? x : -x; if (t > 3) t = 3; z = max(exp(-t), (T)0.25) * alpha + y; c = (int)(t * 10) % 7;',
      'gpu_elem')
    for _, dt in ipairs { 'float32', 'float64' } do
      local x = (T.arange(24, dt):reshape(2, 3, 4) - 11) / 3
      local y = T.arange(4, dt)
      local zc, cc = k(x, y, 1.5)
      local zg, cg = k(x:to_gpu(), y:to_gpu(), 1.5)
      agree(zg, zc)
      agree(cg, cc, 0)
      -- a transposed input and a strided output
      local xt = x:transpose(2, 1, 0)
      local out = T.zeros({ 3, 4, 2 }, dt, dev):transpose(2, 1, 0)
      local _ = k(xt:to_gpu(), 2, 0.5, out, T.zeros({ 4, 3, 2 }, 'int32', dev))
      agree(out, (k(xt, 2, 0.5)))
    end
  end)

  it('elementwise: raw parameters, i and _ind.size()', function()
    local k = cuda.elementwise('raw T w', 'T y', 'y = w[(i + 3) % w.size()] + _ind.size()', 'gpu_raw')
    local w = T.arange(7, 'int64')
    agree(k(w:to_gpu(), T.empty(7, 'int64', dev)), k(w, T.empty(7, 'int64')), 0)
  end)

  it('elementwise: float16 computes in float32', function()
    local k = cuda.elementwise('T x', 'T y', 'y = x * 0.5f + 1', 'gpu_half')
    local x = T.tensor({ 1, 3, -8, 0.25 }, 'float16')
    agree(k(x:to_gpu()), k(x), 1e-3)
  end)

  it('reduction: axes, keepdims, no identity, strided input', function()
    local l2 = cuda.reduce('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', 'gpu_l2')
    local amax = cuda.reduce('T x', 'T y', 'x', 'max(a, b)', 'y = a', nil, 'gpu_amax')
    local x = T.random.randn({ 5, 300, 7 }, 'float32')
    for _, opts in ipairs { {}, { axis = 1 }, { axis = { 0, 2 } }, { axis = -1, keepdims = true } } do
      agree(l2(x:to_gpu(), opts), l2(x, opts), 1e-4)
      agree(amax(x:to_gpu(), opts), amax(x, opts), 0)
    end
    local xt = x:transpose(1, 2, 0)
    agree(l2(xt:to_gpu(), { axis = 0 }), l2(xt, { axis = 0 }), 1e-4)
  end)

  it('caches modules in memory', function()
    local k = cuda.elementwise('T x', 'T y', 'y = x + 41', 'gpu_cache_probe')
    local x = T.ones(3, 'float32', dev)
    local before = KC.stats.memory_hits
    k(x); k(x)
    assert.is_true(KC.stats.memory_hits > before)
    assert.are.same({ 42, 42, 42 }, k(x):to_cpu():totable())
  end)

  it('reports a CUDA compile error with the kernel name and NVRTC log', function()
    local k = cuda.ElementwiseKernel('T x', 'T y', 'y = x +* 2;', 'gpu_bad')
    local ok, e = pcall(k, T.ones(2, 'float32', dev))
    assert.is_false(ok)
    assert.matches('kernel gpu_bad: NVRTC could not compile', tostring(e))
  end)
end)

-- cuda.raw and cuda.fuse on a real GPU: each raw kernel's result is checked
-- against the same computation on the CPU (tensor ops), and each fused
-- function on cuda:0 against the same fused function on CPU tensors (the
-- CPU translation).  Tagged `gpu`: it skips without a usable GPU.
local T = require 'chainer.tensor'
local cuda = require 'chainer.cuda'
local G = require 'cuda.helpers'
local fz = cuda.fusion

describe('raw kernels and fusion on a GPU #gpu', function()
  if G.without_gpu('cuda.raw/cuda.fuse') then return end
  local dev = G.dev

  it('raw: a 1-D launch with float32, int32 and float64 arguments', function()
    local k = cuda.raw([[
extern "C" __global__ void axpb(const float *x, float *y, float a, double b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + (float)b;
}]], 'axpb')
    local n = 1000
    local x = G.rand('float32', { n })
    local y = T.zeros({ n }, 'float32', dev)
    k({ math.ceil(n / 128) }, { 128 }, { x:to_gpu(), y, { 'float32', 2.5 }, { 'float64', -1 }, { 'int32', n } })
    G.agree(y, x * 2.5 - 1, 'raw axpb')
  end)

  it('raw: a 2-D grid and block (a transpose of a strided-free matrix)', function()
    local k = cuda.raw([[
extern "C" __global__ void transpose(const double *x, double *y, long long rows, long long cols) {
  long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long r = (long long)blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) y[c * rows + r] = x[r * cols + c];
}]], 'transpose')
    local x = G.rand('float64', { 37, 70 })
    local y = T.zeros({ 70, 37 }, 'float64', dev)
    k({ math.ceil(70 / 16), math.ceil(37 / 8) }, { 16, 8 }, { x:to_gpu(), y, { 'int64', 37 }, { 'int64', 70 } })
    G.agree(y, x:transpose():contiguous(), 'raw transpose', nil, true)
  end)

  it('raw: dynamic shared memory (one sum per block)', function()
    local k = cuda.raw([[
extern "C" __global__ void block_sum(const int *x, long long *out, int n) {
  extern __shared__ long long buf[];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  buf[t] = i < n ? x[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = buf[0];
}]], 'block_sum')
    local n, B = 1000, 64
    local nb = math.ceil(n / B)
    local x = G.rand('int32', { n })
    local out = T.zeros({ nb }, 'int64', dev)
    k(nb, B, { x:to_gpu(), out, { 'int32', n } }, { shared_mem = B * 8 })
    local xs, sums = x:totable(), {}
    for j = 1, nb do
      local s = 0
      for i = (j - 1) * B + 1, math.min(j * B, n) do s = s + xs[i] end
      sums[j] = s
    end
    G.agree(out, T.array(sums, 'int64'), 'raw block_sum', nil, true)
  end)

  it('raw: RawModule kernels and a CPU tensor refused by name', function()
    local mod = cuda.RawModule([[
extern "C" __global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
extern "C" __global__ void scale(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] *= v; }]])
    local y = T.empty({ 300 }, 'float32', dev)
    mod:get_function('fill')(3, 128, { y, { 'float32', 1.5 }, { 'int32', 300 } })
    mod:get_function('scale')(3, 128, { y, { 'float32', -2 }, { 'int32', 300 } })
    G.agree(y, T.full({ 300 }, -3, 'float32'), 'raw module', nil, true)
    local ok, e = pcall(mod:get_function('fill'), 3, 128, { T.empty(3, 'float32'), { 'float32', 1 }, { 'int32', 3 } })
    assert.is_false(ok)
    assert.matches('args%[1%] is a CPU tensor', e)
  end)

  it('fuse: the same results on cuda:0 as on the CPU, several outputs and dtypes', function()
    local f = cuda.fuse(function(a, b, s)
      local d = a - b * s
      return d * d + 1, fz.where(fz.greater(a, b), fz.exp(a), fz.tanh(b)), a % 3, fz.maximum(a, b) / 2
    end, { kernel_name = 'gpu_fused' })
    for _, dt in ipairs { 'float32', 'float64', 'int32', 'int64' } do
      local a, b = G.rand(dt, { 4, 5 }), G.rand(dt, { 5 })
      local cpu = { f(a, b, 2) }
      local gpu = { f(a:to_gpu(), b:to_gpu(), 2) }
      for j = 1, #cpu do G.agree(gpu[j], cpu[j], 'fuse ' .. dt .. ' output ' .. j, 10) end
    end
    local h = G.rand('float16', { 6 })
    G.agree(f(h:to_gpu(), h:to_gpu(), 0.5), (f(h, h, 0.5)), 'fuse float16', 2)
  end)
end)

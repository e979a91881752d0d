-- bench/gemv_b1.lua: the three weight products of batch-1 inference (the
-- bench MLP 784-1000-1000-10, y = b + W x per layer) through the library's
-- path (T.gemm with W transposed in place and beta = 1: what F.linear's
-- ch_linear runs; runtime/cpu/gemv_rows.h on AVX-512 CPUs) against
-- OpenBLAS's cblas_sgemv called directly on the same tensors.  The two
-- alternate call by call in one process, so a busy machine slows both alike;
-- prints the best, the 10th percentile and the median of each, in us for the
-- three layers.
--   luajit bench/gemv_b1.lua [THREADS] [CALLS]
local ffi = require 'ffi'
local chainer = require 'chainer'
local T = chainer.tensor
local now = require('chainer._libc').monotonic

local threads = tonumber(arg[1]) or chainer.get_num_threads()
local calls = tonumber(arg[2]) or 2000
chainer.set_num_threads(threads)

ffi.cdef [[
void cblas_sgemv(int order, int trans, int m, int n, float alpha, const float *a, int lda,
                 const float *x, int incx, float beta, float *y, int incy);
]]
-- the OpenBLAS the library linked (same soname: the loaded copy)
local blas = ffi.load('libopenblas.so.0')
local ROW_MAJOR, NO_TRANS = 101, 111

T.random.seed(0)
local sizes = { 784, 1000, 1000, 10 }
local W, y, yb = {}, {}, {}
for l = 1, 3 do
  W[l] = T.random.uniform(-0.05, 0.05, { sizes[l + 1], sizes[l] }, 'float32')
  y[l] = T.zeros({ 1, sizes[l + 1] }, 'float32')
  yb[l] = T.zeros({ 1, sizes[l + 1] }, 'float32')
end
local x = T.random.uniform(-1, 1, { 1, 784 }, 'float32')
local GEMM = { transb = true, beta = 1 }

local function ours()
  local h = x
  for l = 1, 3 do
    T.gemm(y[l], h, W[l], GEMM)
    h = y[l]
  end
end

local function f32(t) return ffi.cast('float *', t.ptr.data) end
local function openblas()
  local h = x
  for l = 1, 3 do
    blas.cblas_sgemv(ROW_MAJOR, NO_TRANS, sizes[l + 1], sizes[l], 1, f32(W[l]), sizes[l], f32(h), 1, 1, f32(yb[l]), 1)
    h = yb[l]
  end
end

local t_ours, t_blas = {}, {}
for _ = 1, 100 do ours() openblas() end
for i = 1, calls do
  local t0 = now()
  ours()
  local t1 = now()
  openblas()
  local t2 = now()
  t_ours[i], t_blas[i] = t1 - t0, t2 - t1
end

local function summary(t)
  table.sort(t)
  return string.format('best %.1f, p10 %.1f, median %.1f us', t[1] * 1e6, t[math.max(1, math.floor(calls / 10))] * 1e6,
    t[math.floor(calls / 2) + 1] * 1e6)
end
print(string.format('%d thread(s), %d calls: library %s | cblas_sgemv %s', threads, calls, summary(t_ours),
  summary(t_blas)))

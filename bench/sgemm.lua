-- bench/sgemm.lua: float32 matrix products through chainer.tensor.matmul.
-- Compare with bench/sgemm_c.c (cblas_sgemm called directly from C).
-- Run: CHAINLUA_LIB=build/libchainlua.so luajit bench/sgemm.lua  (LUA_PATH with lua/?.lua)
local T = require 'chainer.tensor'

-- wall clock: os.clock() is CPU time summed over threads
local now = require('chainer._libc').monotonic

local function median(v)
  table.sort(v)
  return v[math.floor(#v / 2) + 1]
end

for _, n in ipairs({ 1024, 2048 }) do
  local a, b = T.ones({ n, n }) * 0.5, T.ones({ n, n }) * 0.25
  local c = T.matmul(a, b) -- warm-up
  local t = {}
  for r = 1, (n == 1024 and 7 or 5) do
    local t0 = now()
    c = T.matmul(a, b)
    t[r] = now() - t0
    c = nil
  end
  print(string.format('matmul float32 %d: %.1f GFLOP/s', n, 2 * n ^ 3 / median(t) / 1e9))
  -- transposed operand, no copy
  t = {}
  for r = 1, 5 do
    local t0 = now()
    c = T.matmul(a, b, { transb = true })
    t[r] = now() - t0
  end
  print(string.format('matmul float32 %d (transb): %.1f GFLOP/s', n, 2 * n ^ 3 / median(t) / 1e9))
end

-- batch-1 inference product: 1x784 @ 784x1000 (routed to sgemv)
local x, w = T.ones({ 1, 784 }) * 0.5, T.ones({ 784, 1000 }) * 0.01
local reps, t = 2000, {}
for r = 1, 5 do
  local t0 = now()
  for _ = 1, reps do T.matmul(x, w) end
  t[r] = (now() - t0) / reps
end
print(string.format('matmul batch-1 1x784 @ 784x1000: %.1f us', median(t) * 1e6))
-- the same through gemm into a preallocated output (no allocation)
local y = T.zeros({ 1, 1000 })
t = {}
for r = 1, 5 do
  local t0 = now()
  for _ = 1, reps do T.gemm(y, x, w) end
  t[r] = (now() - t0) / reps
end
print(string.format('gemm batch-1 1x784 @ 784x1000 (in place): %.1f us', median(t) * 1e6))

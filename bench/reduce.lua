-- bench/reduce.lua: float32 reductions over contiguous data, in GB/s of
-- input read (compare with bench/membw.c's read_gbs, the parallel-read
-- ceiling).  Each line: wall-clock median (min-max) and the median of the
-- process CPU time per call (all threads together), over REPS calls.
-- Run: CHAINLUA_LIB=build/libchainlua.so luajit bench/reduce.lua [REPS]
-- (LUA_PATH with lua/?.lua; CHAINLUA_ADAPTIVE_THREADS=0 on a shared machine).
package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local T = require 'chainer.tensor'
local B = require 'bench'

local reps = tonumber(arg[1]) or 15

local function median(v)
  local s = {}
  for i, x in ipairs(v) do s[i] = x end
  table.sort(s)
  return s[math.floor((#s + 1) / 2)], s[1], s[#s]
end

local function bench(name, bytes, fn)
  fn()
  fn()
  local wall, cpu = {}, {}
  for r = 1, reps do
    local c0, t0 = B.cpu_time(), B.now()
    fn()
    wall[r], cpu[r] = B.now() - t0, B.cpu_time() - c0
  end
  local med, lo, hi = median(wall)
  print(string.format('%-28s %7.1f GB/s (%.1f-%.1f)  cpu %.2f ms', name, bytes / med / 1e9, bytes / hi / 1e9,
    bytes / lo / 1e9, median(cpu) * 1e3))
end

local n = 10000000
local a = T.random.uniform(-1, 1, { n }, 'float32')
bench('sum 1e7', 4 * n, function() T.sum(a) end)
bench('mean 1e7', 4 * n, function() T.mean(a) end)
bench('max 1e7', 4 * n, function() T.max(a) end)
bench('argmax 1e7', 4 * n, function() T.argmax(a) end)
a = a:reshape(1000, 10000)
bench('sum (1000,10000) axis=1', 4 * n, function() T.sum(a, 1) end)
bench('sum (1000,10000) axis=0', 4 * n, function() T.sum(a, 0) end)
bench('mean (1000,10000) axis=1', 4 * n, function() T.mean(a, 1) end)
bench('max (1000,10000) axis=1', 4 * n, function() T.max(a, 1) end)
bench('max (1000,10000) axis=0', 4 * n, function() T.max(a, 0) end)
bench('argmax (1000,10000) axis=1', 4 * n, function() T.argmax(a, 1) end)
bench('argmax (1000,10000) axis=0', 4 * n, function() T.argmax(a, 0) end)

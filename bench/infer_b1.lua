-- bench/infer_b1.lua: one batch-1 inference call of the bench MLP
-- (784-1000-1000-10 with ReLU, no_backprop_mode: the `infer` workload),
-- timed call by call, with what each call costs the process besides time:
-- CPU time (all threads), context switches of all its threads (voluntary:
-- a thread went to sleep, e.g. an OpenMP worker on its futex; involuntary:
-- the scheduler took the core) and minor page faults.
--   luajit bench/infer_b1.lua [THREADS] [CALLS] [WARMUP]
-- Prints one line: wall us per call (best, p10, median, mean), CPU us per call,
-- switches and faults per call.  Compare variants (GOMP_SPINCOUNT,
-- OMP_WAIT_POLICY, thread counts) in processes run alternately; use with
-- CHAINLUA_ADAPTIVE_THREADS=0 to keep the thread count fixed.
local ffi = require 'ffi'
local chainer = require 'chainer'
local B = require 'bench.lib.bench'
local T = chainer.tensor

local threads = tonumber(arg[1]) or chainer.get_num_threads()
local calls = tonumber(arg[2]) or 5000
local warmup = tonumber(arg[3]) or 4000
chainer.set_num_threads(threads)

pcall(ffi.cdef, [[
  struct chainlua_bench_rusage { long f[18]; };
  int getrusage(int who, struct chainlua_bench_rusage *u);
  int getpid(void);
]])
local ru = ffi.new('struct chainlua_bench_rusage')
-- ru_minflt: after two timevals (4 longs), maxrss, ixrss, idrss, isrss
local function minor_faults()
  ffi.C.getrusage(0, ru)
  return tonumber(ru.f[8])
end

-- voluntary and involuntary context switches, summed over the threads
local function switches()
  local v, n = 0, 0
  local dir = '/proc/' .. ffi.C.getpid() .. '/task'   -- not /proc/self: that is ls
  local ls = io.popen('ls ' .. dir)
  local tids = ls:read('*a')
  ls:close()
  for tid in tids:gmatch('%d+') do
    local f = io.open(dir .. '/' .. tid .. '/status')
    if f then
      local s = f:read('*a')
      f:close()
      v = v + tonumber(s:match('voluntary_ctxt_switches:%s*(%d+)'))
      n = n + tonumber(s:match('nonvoluntary_ctxt_switches:%s*(%d+)'))
    end
  end
  return v, n
end

local model = B.MLP()()
local x = T.random.uniform(-1, 1, { 1, 784 }, 'float32')
local wall = {}
chainer.no_backprop_mode(function()
  for _ = 1, warmup do model(x) end
  local v0, n0 = switches()
  local f0, c0 = minor_faults(), B.cpu_time()
  for i = 1, calls do
    local t0 = B.now()
    model(x)
    wall[i] = B.now() - t0
  end
  local cpu = B.cpu_time() - c0
  local mean = 0
  for i = 1, calls do mean = mean + wall[i] end
  mean = mean / calls
  local f1 = minor_faults()
  local v1, n1 = switches()
  table.sort(wall)
  local function q(p) return wall[math.max(1, math.floor(calls * p + 0.5))] * 1e6 end
  print(string.format('threads %d  wall us best %.1f p10 %.1f median %.1f mean %.1f  cpu us %.1f  ' ..
                      'switches/call vol %.2f invol %.2f  faults/call %.2f',
                      threads, wall[1] * 1e6, q(0.1), q(0.5), mean * 1e6, cpu / calls * 1e6,
                      (v1 - v0) / calls, (n1 - n0) / calls, (f1 - f0) / calls))
end)

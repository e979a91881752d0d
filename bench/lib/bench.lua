-- bench/lib/bench.lua: what every Lua workload of the harness shares: a
-- wall clock, the thread count, timing with warm-up and repetitions, peak
-- RSS, and one JSON line of results on stdout (read by bench/run).
local ffi = require 'ffi'

-- clock_gettime under a name of our own, so that another module declaring
-- clock_gettime with a different struct type cannot clash with this one
pcall(ffi.cdef, [[
  int chainlua_bench_clock_gettime(int clk, void *ts) __asm__("clock_gettime");
]])
local ts = ffi.new('int64_t[2]')
local C = ffi.C

local M = {}

function M.now()
  C.chainlua_bench_clock_gettime(1, ts)  -- CLOCK_MONOTONIC
  return tonumber(ts[0]) + tonumber(ts[1]) * 1e-9
end

-- CPU time of this process in seconds (CLOCK_PROCESS_CPUTIME_ID): the
-- measure for a loaded machine, where wall time counts other processes.
function M.cpu_time()
  C.chainlua_bench_clock_gettime(2, ts)
  return tonumber(ts[0]) + tonumber(ts[1]) * 1e-9
end

-- CPU seconds (user + system) used so far by process `pid` ('self' or a
-- pid): from /proc, in Linux ticks of 1/100 s, so it also reads the worker
-- processes of MultiprocessIterator and MultiprocessParallelUpdater.
function M.process_cpu_seconds(pid)
  local f = assert(io.open('/proc/' .. pid .. '/stat'))
  local fields = {}
  for v in f:read('*a'):match('%) (.*)$'):gmatch('%S+') do fields[#fields + 1] = v end
  f:close()
  return (tonumber(fields[12]) + tonumber(fields[13])) / 100   -- utime, stime (fields 14, 15 of stat)
end

-- The MLP every MLP workload times: 784-1000-1000-10 with ReLU (Chainer's
-- MNIST example), as a Chain class made once.
local MLP
function M.MLP()
  if MLP then return MLP end
  local chainer = require 'chainer'
  local F, L = require 'chainer.functions', require 'chainer.links'
  MLP = chainer.Chain:extend('BenchMLP')
  function MLP:init()
    self.l1 = L.Linear(784, 1000)
    self.l2 = L.Linear(1000, 1000)
    self.l3 = L.Linear(1000, 10)
  end
  function MLP:forward(x) return self.l3(F.relu(self.l2(F.relu(self.l1(x))))) end
  return MLP
end

-- The fixture of the CPU-time MLP benchmarks (mlp_cpu.lua, mlp_phases.lua):
-- NT threads (default 1), seed 0, the MLP with SGD (lr 0.01), and one
-- batch of 100 MNIST-sized float32 inputs with int32 labels.
function M.mlp_step_fixture()
  local chainer = require 'chainer'
  local T = chainer.tensor
  chainer.set_num_threads(tonumber(os.getenv('NT') or 1))
  T.random.seed(0)
  local model = M.MLP()()
  local opt = require('chainer.optimizers').SGD { lr = 0.01 }:setup(model)
  local x = T.random.uniform(-1, 1, { 100, 784 }, 'float32')
  local t = T.random.randint(0, 10, { 100 }, 'int32')
  return model, opt, x, t
end

-- The MLP step's 8 products alone through T.gemm, as a function of no
-- arguments (preallocated outputs; the model's weights and the batch x):
-- forward x W1^T, h1 W2^T, h2 W3^T; backward layer 3's gW and gx, layer 2's
-- gW and gx, layer 1's gW.  Used by workloads.lua (the harness splits the
-- step into its products and the rest) and mlp_phases.lua.
function M.mlp_products(model, x)
  local T = require('chainer').tensor
  local W1, W2, W3 = model.l1.W.array, model.l2.W.array, model.l3.W.array
  local h1, h2, y = T.empty({ 100, 1000 }), T.empty({ 100, 1000 }), T.empty({ 100, 10 })
  local g1, g2, g3 = T.empty({ 1000, 784 }), T.empty({ 1000, 1000 }), T.empty({ 10, 1000 })
  local gh2, gh1 = T.empty({ 100, 1000 }), T.empty({ 100, 1000 })
  local NT, TN = { transb = true }, { transa = true }
  return function()
    T.gemm(h1, x, W1, NT); T.gemm(h2, h1, W2, NT); T.gemm(y, h2, W3, NT)
    T.gemm(g3, y, h2, TN); T.gemm(gh2, y, W3)
    T.gemm(g2, gh2, h1, TN); T.gemm(gh1, gh2, W2)
    T.gemm(g1, gh1, x, TN)
  end
end
M.MLP_PRODUCT_FLOP = 2 * 100 * (784 * 1000 + 1000 * 1000 + 1000 * 10) * 3 - 2 * 100 * 784 * 1000

-- Peak resident set size of this process in MiB (VmHWM).
function M.peak_rss_mib()
  local f = io.open('/proc/self/status')
  if not f then return nil end
  local s = f:read('*a')
  f:close()
  local kb = s:match('VmHWM:%s*(%d+)')
  return kb and tonumber(kb) / 1024 or nil
end

-- Options from the environment (set by bench/run).
function M.opts()
  return {
    threads = tonumber(os.getenv('BENCH_THREADS') or '') or nil,
    warmup = tonumber(os.getenv('BENCH_WARMUP') or '') or 3,
    reps = tonumber(os.getenv('BENCH_REPS') or '') or 5,
    quick = os.getenv('BENCH_QUICK') == '1',
    -- where the workloads run (scripts/gpu-check sets cuda:0); default the host
    device = os.getenv('BENCH_DEVICE') or 'cpu',
  }
end

-- Waits for the device's queued work before a clock is read (a GPU runs
-- asynchronously); nothing to wait for on the host.
M.sync = function() end

function M.setup()
  local chainer = require 'chainer'
  local o = M.opts()
  if o.threads then chainer.set_num_threads(o.threads) end
  o.threads = chainer.get_num_threads()
  if o.device ~= 'cpu' then
    local cuda = chainer.cuda
    if not cuda.available then error('bench: BENCH_DEVICE=' .. o.device .. ' but no GPU: ' .. cuda.info(), 0) end
    M.sync = function() cuda.synchronize() end
  end
  M.device = o.device
  return chainer, o
end

-- Moves tensors and links to the workload's device (BENCH_DEVICE); returns
-- them in order.
function M.place(...)
  local out = { ... }
  if M.device == nil or M.device == 'cpu' then return ... end
  for i = 1, select('#', ...) do
    local v = out[i]
    if type(v) == 'table' and v.to_device and v.namedparams then v:to_device(M.device)
    else out[i] = v:to_device(M.device) end
  end
  return unpack(out, 1, select('#', ...))
end

-- Runs fn() `warmup` times, then `reps` timed rounds of `iters` calls;
-- returns the per-call seconds of every round (wall clock) and, second,
-- the per-call CPU seconds of the process in the same rounds.
function M.time(fn, iters, warmup, reps)
  for _ = 1, warmup do fn() end
  M.sync()
  local t, cpu = {}, {}
  for r = 1, reps do
    local c0, t0 = M.cpu_time(), M.now()
    for _ = 1, iters do fn() end
    M.sync()
    t[r] = (M.now() - t0) / iters
    cpu[r] = (M.cpu_time() - c0) / iters
  end
  return t, cpu
end

local function json_value(v)
  local tv = type(v)
  if tv == 'number' then
    if v ~= v or v == math.huge or v == -math.huge then return 'null' end
    return string.format('%.6g', v)
  elseif tv == 'string' then
    return '"' .. v:gsub('[%c"\\]', function(c) return string.format('\\u%04x', c:byte()) end) .. '"'
  elseif tv == 'boolean' then return tostring(v)
  elseif tv == 'table' then
    if #v > 0 or next(v) == nil then
      local parts = {}
      for i = 1, #v do parts[i] = json_value(v[i]) end
      return '[' .. table.concat(parts, ',') .. ']'
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    local parts = {}
    for i, k in ipairs(keys) do parts[i] = json_value(tostring(k)) .. ':' .. json_value(v[k]) end
    return '{' .. table.concat(parts, ',') .. '}'
  end
  return 'null'
end
M.json = json_value

-- Prints the result line bench/run parses: RESULT {json}.
function M.report(t)
  t.framework = 'chainlua'
  t.device = M.device
  t.peak_rss_mib = M.peak_rss_mib()
  io.stdout:write('RESULT ', json_value(t), '\n')
  io.stdout:flush()
end

return M

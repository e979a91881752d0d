-- bench/probe.lua: fixed-work loops for instruction counting (callgrind).
-- Wall-clock time on a shared machine is noise; instruction counts are not.
-- bench/icount runs this script twice (N and 2N iterations) under
-- `valgrind --tool=callgrind` and reports the difference per iteration,
-- which cancels start-up and JIT warm-up.  PROBE_GARBAGE=1 prints instead
-- the bytes of Lua heap one iteration allocates (collector stopped), and
-- PROBE_TIME=1 wall and CPU time per iteration, PROBE_HEAP=1 the modules
-- loaded and the live heap after a full collection.
--   luajit bench/probe.lua MODE N
-- MODE: node (the per-node loop of node_overhead.lua: 101 nodes),
--       node_min (the same loop without chainer.functions loaded whole),
--       tensor_add (T.add on 10-element float32 tensors),
--       var_mul_add (h * a + b on Variables, no backward),
--       bmm_small ((3,2,4) @ (3,4,1) batched matmul),
--       linear_b1 (F.linear at batch 1: 1x784 @ 784x1000^T, no backprop),
--       add_64k (T.add of 65536-element tensors: allocator path),
--       node_static (node's loop body under chainer.static_graph: replayed),
--       mlp_step, mlp_step_static (bench/'s MLP 784-1000-1000-10, batch 100:
--       forward, softmax cross entropy, backward, SGD; without and with
--       static_graph on the MLP's forward),
--       mlp_small, mlp_small_static (the same step on a 784-100-10 MLP at
--       batch 8, where the per-node work is a larger share),
--       infer_b1 (bench/'s MLP at batch 1 under no_backprop_mode, the
--       `infer` workload), infer_tiny (the same calls on a 16-16-16-10 MLP:
--       the framework's share of a batch-1 call without the weights' reads)
local chainer = require 'chainer'
-- (F is loaded on first use, so that node_min can run without it)
local F = setmetatable({}, { __index = function(t, k)
  local v = require('chainer.functions')[k]
  rawset(t, k, v)
  return v
end })
local T = chainer.tensor

if os.getenv('GCSTEPMUL') then collectgarbage('setstepmul', tonumber(os.getenv('GCSTEPMUL'))) end
if os.getenv('GCPAUSE') then collectgarbage('setpause', tonumber(os.getenv('GCPAUSE'))) end
local mode = arg[1] or 'node'
local n = tonumber(arg[2]) or 1000

-- The graph both node modes record: 50 multiply-adds h = h * a + b on
-- 10-element Variables; returns its forward and its inputs x, a, b.
local function mul_add_chain()
  local a = chainer.Variable(T.full({ 10 }, 1.001))
  local b = chainer.Variable(T.full({ 10 }, 0.001))
  local x = chainer.Variable(T.full({ 10 }, 0.5))
  return function()
    local h = x
    for _ = 1, 50 do h = h * a + b end
    return h
  end, x, a, b
end

local body
if mode == 'node' then
  local forward, x, a, b = mul_add_chain()
  body = function()
    local loss = F.sum(forward())
    loss:backward()
    x:cleargrad() a:cleargrad() b:cleargrad()
  end
elseif mode == 'node_min' then
  -- the node loop with only chainer and F.sum's module loaded: the same
  -- work with a smaller live Lua heap (bench/README.md, session 11)
  local sum = require('chainer.functions.math.sum').sum
  local forward, x, a, b = mul_add_chain()
  body = function()
    local loss = sum(forward())
    loss:backward()
    x:cleargrad() a:cleargrad() b:cleargrad()
  end
elseif mode == 'var_mul_add' then
  body = mul_add_chain()
elseif mode == 'tensor_add' then
  local a, b = T.full({ 10 }, 1.0), T.full({ 10 }, 2.0)
  body = function() for _ = 1, 100 do T.add(a, b) end end
elseif mode == 'bmm_small' then
  local a, b = T.ones({ 3, 2, 4 }), T.ones({ 3, 4, 1 })
  body = function() for _ = 1, 100 do T.matmul(a, b) end end
elseif mode == 'linear_b1' then
  local x = T.ones({ 1, 784 })
  local W = T.ones({ 1000, 784 }) * 0.01
  body = function() chainer.no_backprop_mode(function() F.linear(x, W) end) end
elseif mode == 'add_64k' then
  local a, b = T.ones({ 65536 }), T.ones({ 65536 })
  body = function() for _ = 1, 10 do T.add(a, b) end end
elseif mode == 'node_static' then
  local a = chainer.Variable(T.full({ 10 }, 1.001))
  local b = chainer.Variable(T.full({ 10 }, 0.001))
  local x = chainer.Variable(T.full({ 10 }, 0.5))
  local forward = chainer.static_graph(function(x0)
    local h = x0
    for _ = 1, 50 do h = h * a + b end
    return F.sum(h)
  end)
  body = function()
    local loss = forward(x)
    loss:backward()
    x:cleargrad() a:cleargrad() b:cleargrad()
  end
elseif mode:match('^mlp_') then
  package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
  local L = chainer.links
  local Net
  local small = mode:match('^mlp_small') ~= nil
  if small then
    Net = chainer.Chain:extend('ProbeSmallMLP')
    function Net:init() self.l1 = L.Linear(784, 100) self.l2 = L.Linear(100, 10) end
    function Net:forward(x) return self.l2(F.relu(self.l1(x))) end
  else
    Net = require('bench').MLP():extend('ProbeMLP')
  end
  if mode:match('_static$') then Net.forward = chainer.static_graph(Net.forward) end
  T.random.seed(0)
  local model = Net()
  local opt = chainer.optimizers.SGD { lr = 0.01 }:setup(model)
  -- PROBE_GRAD_BUCKET=1: the gradients as views into one persistent buffer
  -- (chainer/_grad_bucket.lua, what chainermn's mean gradient uses)
  if os.getenv('PROBE_GRAD_BUCKET') == '1' then require('chainer._grad_bucket').of(model) end
  local batch = small and 8 or 100
  local x = T.random.uniform(-1, 1, { batch, 784 }, 'float32')
  local t = T.random.randint(0, 10, { batch }, 'int32')
  body = function()
    local loss = F.softmax_cross_entropy(model(x), t)
    model:cleargrads()
    loss:backward()
    opt:update()
  end
elseif mode == 'infer_b1' or mode == 'infer_tiny' then
  package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
  local L = chainer.links
  local Net, d_in
  if mode == 'infer_tiny' then
    Net = chainer.Chain:extend('ProbeTinyMLP')
    function Net:init() self.l1 = L.Linear(16, 16) self.l2 = L.Linear(16, 16) self.l3 = L.Linear(16, 10) end
    function Net:forward(x) return self.l3(F.relu(self.l2(F.relu(self.l1(x))))) end
    d_in = 16
  else
    Net, d_in = require('bench').MLP(), 784
  end
  T.random.seed(0)
  local model = Net()
  local x = T.random.uniform(-1, 1, { 1, d_in }, 'float32')
  local function call() return model(x) end
  body = function() chainer.no_backprop_mode(call) end
else
  error('probe: unknown mode ' .. mode)
end

if os.getenv('PROBE_BENCH_ROUNDS') then
  -- bench/node_rounds: PROBE_BENCH_ROUNDS rounds of n iterations, a
  -- getppid() call (callgrind's dump) after each and no jit.flush, as
  -- bench/run times a workload (bench/workloads.lua's node: n = 200, the
  -- first round its warm-up)
  local ffi = require 'ffi'
  pcall(ffi.cdef, 'int getppid(void);')
  for _ = 1, tonumber(os.getenv('PROBE_BENCH_ROUNDS')) do
    for _ = 1, n do body() end
    ffi.C.getppid()
  end
  return
end

if os.getenv('PROBE_ROUNDS') then
  -- bench/icount_rounds: PROBE_ROUNDS rounds of jit.flush(), n warm-up
  -- iterations, then n measured ones between two getppid() calls, where
  -- callgrind dumps its counts (--dump-before=getppid).  Each round compiles
  -- its traces afresh, so one process samples several JIT outcomes.
  local ffi = require 'ffi'
  pcall(ffi.cdef, 'int getppid(void);')   -- (chainer._libc may have declared it)
  for _ = 1, tonumber(os.getenv('PROBE_ROUNDS')) do
    jit.flush()
    for _ = 1, n do body() end
    ffi.C.getppid()
    for _ = 1, n do body() end
    ffi.C.getppid()
  end
  return
end

if os.getenv('PROBE_HEAP') then
  -- heap mode (bench/README.md, session 12): the modules loaded and the
  -- live Lua heap after a full collection, after MODE's setup and again
  -- after n iterations (what every incremental collection cycle marks)
  local function report(when)
    collectgarbage('collect')
    collectgarbage('collect')
    local modules = 0
    for _ in pairs(package.loaded) do modules = modules + 1 end
    print(string.format('%s %s modules %d heap_kib %.0f', mode, when, modules, collectgarbage('count')))
  end
  report('setup')
  for _ = 1, n do body() end
  report('loop')
  return
end

if os.getenv('PROBE_GARBAGE') then
  -- garbage mode (bench/README.md, issue 19 session 10): n warm-up
  -- iterations, then n counted ones with the collector stopped (a full
  -- collection every 20 keeps the heap small); prints the bytes of Lua heap
  -- each iteration allocates, and per graph node for the node loop
  for _ = 1, n do body() end
  collectgarbage('collect')
  collectgarbage('stop')
  local total = 0
  for i = 1, n do
    local k0 = collectgarbage('count')
    body()
    total = total + (collectgarbage('count') - k0)
    if i % 20 == 0 then collectgarbage('restart') collectgarbage('collect') collectgarbage('stop') end
  end
  collectgarbage('restart')
  local per_iter = total * 1024 / n
  print(string.format('%s garbage_bytes %.1f per iteration%s', mode, per_iter,
    mode == 'node' and string.format(', %.1f per node (101 nodes)', per_iter / 101) or ''))
  return
end

if os.getenv('PROBE_TIME') then
  -- wall-time mode (bench/static_graph.sh): n warm-up iterations, then n
  -- timed ones; prints wall and CPU microseconds per iteration
  package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
  local B = require 'bench'
  for _ = 1, n do body() end
  local w0, c0 = B.now(), B.cpu_time()
  for _ = 1, n do body() end
  print(string.format('%s wall_us %.2f cpu_us %.2f', mode, (B.now() - w0) / n * 1e6, (B.cpu_time() - c0) / n * 1e6))
  return
end

for _ = 1, n do body() end

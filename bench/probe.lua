-- bench/probe.lua: fixed-work loops for instruction counting (callgrind).
-- Wall-clock time on a shared machine is noise; instruction counts are not.
-- bench/icount runs this script twice (N and 2N iterations) under
-- `valgrind --tool=callgrind` and reports the difference per iteration,
-- which cancels start-up and JIT warm-up.
--   luajit bench/probe.lua MODE N
-- MODE: node (the per-node loop of node_overhead.lua: 101 nodes),
--       tensor_add (T.add on 10-element float32 tensors),
--       var_mul_add (h * a + b on Variables, no backward),
--       bmm_small ((3,2,4) @ (3,4,1) batched matmul),
--       linear_b1 (F.linear at batch 1: 1x784 @ 784x1000^T, no backprop),
--       add_64k (T.add of 65536-element tensors: allocator path)
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

if os.getenv('GCSTEPMUL') then collectgarbage('setstepmul', tonumber(os.getenv('GCSTEPMUL'))) end
if os.getenv('GCPAUSE') then collectgarbage('setpause', tonumber(os.getenv('GCPAUSE'))) end
local mode = arg[1] or 'node'
local n = tonumber(arg[2]) or 1000

local body
if mode == 'node' then
  local a = chainer.Variable(T.full({ 10 }, 1.001))
  local b = chainer.Variable(T.full({ 10 }, 0.001))
  local x = chainer.Variable(T.full({ 10 }, 0.5))
  body = function()
    local h = x
    for _ = 1, 50 do h = h * a + b end
    local loss = F.sum(h)
    loss:backward()
    x:cleargrad() a:cleargrad() b:cleargrad()
  end
elseif mode == 'var_mul_add' then
  local a = chainer.Variable(T.full({ 10 }, 1.001))
  local b = chainer.Variable(T.full({ 10 }, 0.001))
  local x = chainer.Variable(T.full({ 10 }, 0.5))
  body = function()
    local h = x
    for _ = 1, 50 do h = h * a + b end
  end
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
else
  error('probe: unknown mode ' .. mode)
end

for _ = 1, n do body() end

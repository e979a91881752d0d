-- bench/node_garbage.lua: bytes of Lua heap each graph node leaves behind,
-- for the `node` loop (h = h * a + b, 50 times, on 10-element float32
-- Variables, then F.sum and backward: 101 nodes), measured with the
-- collector stopped as collectgarbage('count') deltas.
--   luajit bench/node_garbage.lua [iterations]
-- Prints bytes per node for the forward, the backward and both.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

local iters = tonumber(arg and arg[1]) or 200
local steps = 50
local nodes = 2 * steps + 1

local a = chainer.Variable(T.full({ 10 }, 1.001))
local b = chainer.Variable(T.full({ 10 }, 0.001))
local x = chainer.Variable(T.full({ 10 }, 0.5))

local function forward()
  local h = x
  for _ = 1, steps do h = h * a + b end
  return F.sum(h)
end

-- warm up (JIT, lazily loaded modules, grown tables), then count
for _ = 1, 50 do
  local loss = forward()
  loss:backward()
  x:cleargrad() a:cleargrad() b:cleargrad()
end
collectgarbage('collect')
collectgarbage('stop')
local fwd, bwd = 0, 0
for _ = 1, iters do
  local k0 = collectgarbage('count')
  local loss = forward()
  local k1 = collectgarbage('count')
  loss:backward()
  x:cleargrad() a:cleargrad() b:cleargrad()
  local k2 = collectgarbage('count')
  fwd, bwd = fwd + (k1 - k0), bwd + (k2 - k1)
  if (_ % 20) == 0 then collectgarbage('restart') collectgarbage('collect') collectgarbage('stop') end
end
collectgarbage('restart')
local f, bk = fwd * 1024 / iters / nodes, bwd * 1024 / iters / nodes
print(string.format('node_garbage: %.1f bytes per node (forward %.1f, backward %.1f), %d nodes x %d iterations',
  f + bk, f, bk, nodes, iters))

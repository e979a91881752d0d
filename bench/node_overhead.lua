-- bench/node_overhead.lua: Lua overhead of the autograd per graph node.
-- A chain of 100 tiny elementwise nodes (h = h * a + b, 50 times, on
-- 10-element float32 tensors), then sum and backward; the time per node is
-- (forward + backward) / number of nodes.  Compare with node_overhead.py
-- (the same loop in PyTorch eager mode).
--   luajit bench/node_overhead.lua [iterations]
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

package.path = (arg and arg[0] and arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local now = require('bench').now

local iters = tonumber(arg and arg[1]) or 4000
local steps = 50
local nodes = 2 * steps + 1

local a = chainer.Variable(T.full({ 10 }, 1.001))
local b = chainer.Variable(T.full({ 10 }, 0.001))
local x = chainer.Variable(T.full({ 10 }, 0.5))

local function run_once()
  local h = x
  for _ = 1, steps do h = h * a + b end
  local loss = F.sum(h)
  loss:backward()
  x:cleargrad() a:cleargrad() b:cleargrad()
end

-- the same work without the autograd: tensor ops only (forward + the
-- tensor ops backward does), to separate kernel/allocation cost from graph cost
local function run_tensors()
  local h = x.array
  local ad, bd = a.array, b.array
  local hs = {}
  for i = 1, steps do hs[i] = h h = T.add(T.mul(h, ad), bd) end
  local s = T.sum(h)
  local g = T.ones_like(h)
  local ga, gx = nil, nil
  for i = steps, 1, -1 do
    local gm = g
    local t = T.mul(gm, hs[i])
    ga = ga and T.add(ga, t) or t
    g = T.mul(gm, ad)
  end
  return s, g, ga
end

-- The best of many short batches: on a busy machine some batches still run
-- undisturbed, and the minimum is what the code costs.
local function measure(fn, n)
  for _ = 1, 200 do fn() end
  local batch = 10
  local best = math.huge
  for _ = 1, math.max(1, math.floor(n / batch)) do
    local t0 = now()
    for _ = 1, batch do fn() end
    best = math.min(best, (now() - t0) / batch)
  end
  return best
end

local t_graph = measure(run_once, iters)
local t_tensor = measure(run_tensors, iters)
print(string.format('chainlua autograd: %.3f us per node (forward+backward, %d nodes, 10 elements)',
  t_graph / nodes * 1e6, nodes))
print(string.format('tensor ops alone : %.3f us per node (same kernels, no graph)', t_tensor / nodes * 1e6))
print(string.format('graph overhead   : %.3f us per node', (t_graph - t_tensor) / nodes * 1e6))

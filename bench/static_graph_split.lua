-- bench/static_graph_split.lua [dbr|static] [N]: CPU microseconds of the per-node
-- loop's forward and of its backward, apart, without and with chainer.static_graph
-- (N warm-up iterations, then N measured; 1 thread).
package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local B = require 'bench'
local chainer = require 'chainer'
local F, T = chainer.functions, chainer.tensor
local a = chainer.Variable(T.full({ 10 }, 1.001))
local b = chainer.Variable(T.full({ 10 }, 0.001))
local x = chainer.Variable(T.full({ 10 }, 0.5))
local function fwd(x0) local h = x0 for _ = 1, 50 do h = h * a + b end return F.sum(h) end
local sfwd = chainer.static_graph(fwd)
local f = arg[1] == 'static' and sfwd or fwd
local n = tonumber(arg[2]) or 4000
local tf, tb = 0, 0
for it = 1, 2 * n do
  local c0 = B.cpu_time()
  local loss = f(x)
  local c1 = B.cpu_time()
  loss:backward()
  x:cleargrad() a:cleargrad() b:cleargrad()
  local c2 = B.cpu_time()
  if it > n then tf, tb = tf + c1 - c0, tb + c2 - c1 end
end
print(arg[1], 'forward us', tf / n * 1e6, 'backward us', tb / n * 1e6)

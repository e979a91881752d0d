-- bench/busy_neighbour.lua [STEPS]: wall time of STEPS training steps of a
-- small MLP (784-100-100-10, batch 100, SGD), the workload of issue 21's
-- "busy core" case.  Run by bench/busy-neighbour with and without a
-- spinning neighbour process; the thread count is chainlua's default unless
-- BENCH_THREADS is set.  Prints one line:  RES steps N threads T wall S
package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local B = require 'bench'
local chainer = require 'chainer'
local F, L = require 'chainer.functions', require 'chainer.links'
local optimizers = require 'chainer.optimizers'
local T = chainer.tensor

local threads = tonumber(os.getenv('BENCH_THREADS') or '')
if threads then chainer.set_num_threads(threads) end
local steps = tonumber(arg[1] or 600)

T.random.seed(0)
local model = chainer.Sequential(L.Linear(784, 100), F.relu, L.Linear(100, 100), F.relu, L.Linear(100, 10))
local opt = optimizers.SGD { lr = 0.01 }:setup(model)
local x = T.random.uniform(-1, 1, { 100, 784 }, 'float32')
local t = T.random.randint(0, 10, { 100 }, 'int32')

local function step()
  local loss = F.softmax_cross_entropy(model(x), t)
  model:cleargrads(); loss:backward(); opt:update()
end

for _ = 1, 20 do step() end
local t0 = B.now()
for _ = 1, steps do step() end
print(string.format('RES steps %d threads %d wall %.3f', steps, chainer.get_num_threads(), B.now() - t0))

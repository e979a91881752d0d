-- bench/mpu_mnist.lua: MultiprocessParallelUpdater's training throughput on
-- MNIST, n processes against one.
--
--   CHAINLUA_ADAPTIVE_THREADS=0 chainlua bench/mpu_mnist.lua [--processes 2] [--batch 100]
--     [--units 100] [--updates 300]
--
-- The model: Classifier(784-units-units-10 MLP, ReLU), SGD(0.01), float32,
-- one thread per process.  The 60000 training images are split into
-- `processes` equal parts, each read by its own shuffling SerialIterator of
-- `batch` examples (one per process, as the updater asks).  After 5 warm-up
-- updates (the first one starts the workers), `updates` updates are timed.
-- Prints "samples/s <rate>" (examples of all processes per second of wall
-- time) and "cpu_us/sample <us>" (CPU time of this process and its
-- workers over the timed part, per example: the cost of the parallel
-- arithmetic and the gradient exchange, less sensitive than the rate to
-- other programs on the machine).  --processes 1 runs the same updater
-- with one device (no workers: StandardUpdater's arithmetic).
package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local B = require 'bench'
local chainer = require 'chainer'
local libc = require 'chainer._libc'
local L, F = chainer.links, chainer.functions

local opts = { processes = 2, batch = 100, units = 100, updates = 300 }
local i = 1
while i <= #arg do
  local key = arg[i]:match('^%-%-(.+)$')
  if key == nil or opts[key] == nil or arg[i + 1] == nil then error('usage: see the header of bench/mpu_mnist.lua') end
  opts[key] = tonumber(arg[i + 1])
  i = i + 2
end

chainer.set_num_threads(1)
chainer.tensor.random.seed(0)
local train = chainer.datasets.get_mnist()
local n = opts.processes
local per = math.floor(train:len() / n)
local its, devices = {}, {}
for k = 1, n do
  its[k] = chainer.iterators.SerialIterator(chainer.datasets.SubDataset(train, (k - 1) * per, k * per), opts.batch)
  devices[k] = '@numpy'
end

local MLP = chainer.Chain:extend('BenchMLP')
function MLP:init()
  self.l1 = L.Linear(784, opts.units)
  self.l2 = L.Linear(opts.units, opts.units)
  self.l3 = L.Linear(opts.units, 10)
end
function MLP:forward(x) return self.l3(F.relu(self.l2(F.relu(self.l1(x))))) end
local model = L.Classifier(MLP())
local opt = chainer.optimizers.SGD(0.01)
opt:setup(model)
local updater = chainer.training.updaters.MultiprocessParallelUpdater(its, opt, { devices = devices })

local cpu_seconds = B.process_cpu_seconds
local function cpu_all()
  local total = cpu_seconds('self')
  for _, pid in ipairs(updater:worker_pids()) do total = total + cpu_seconds(pid) end
  return total
end

for _ = 1, 5 do updater:update() end
local cpu0, start = cpu_all(), libc.monotonic()
for _ = 1, opts.updates do updater:update() end
local elapsed, cpu = libc.monotonic() - start, cpu_all() - cpu0
updater:finalize()
local samples = opts.updates * n * opts.batch
print(string.format('processes %d  samples/s %.1f', n, samples / elapsed))
print(string.format('cpu_us/sample %.2f', cpu / samples * 1e6))

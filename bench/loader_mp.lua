-- bench/loader_mp.lua: MultiprocessIterator throughput on augmented
-- 28x28 images (issue 16); bench/loader_mp.py is the PyTorch side and
-- bench/loader_ab.py runs both alternately.
--
--   luajit bench/loader_mp.lua [--workers 2] [--batch 128] [--images 10000] [--epochs 2] [--prefetch 1]
--
-- The dataset: `images` random float32 images of 1x28x28 with int32
-- labels; a TransformDataset takes a random 24x24 crop and flips it
-- horizontally with probability 1/2 (math.random, seeded per worker).
-- Timed: `epochs` epochs of it:next() + concat_examples (a batch of
-- tensors, as PyTorch's collate gives), after one warm-up batch that also
-- starts the workers.  Prints "samples/s <rate>" and "cpu_us/sample <us>":
-- the CPU time of this process and its workers over the timed part, per
-- sample (less sensitive than the rate to other programs on the machine).
package.path = (arg[0]:match('^(.*)/[^/]*$') or 'bench') .. '/lib/?.lua;' .. package.path
local B = require 'bench'
local chainer = require 'chainer'
local libc = require 'chainer._libc'
local T = chainer.tensor

local opts = { workers = 2, batch = 128, images = 10000, epochs = 2, prefetch = 1 }
local i = 1
while i <= #arg do
  local key = arg[i]:match('^%-%-(.+)$')
  if key == nil or opts[key] == nil or arg[i + 1] == nil then error('usage: see the header of bench/loader_mp.lua') end
  opts[key] = tonumber(arg[i + 1])
  i = i + 2
end

chainer.set_num_threads(1)
T.random.seed(0)
local x = T.random.uniform(0, 1, { opts.images, 1, 28, 28 }, 'float32')
local t = T.random.randint(0, 10, { opts.images }, 'int32')
local CROP = 24

local function augment(ex)
  local top, left = math.random(0, 28 - CROP), math.random(0, 28 - CROP)
  local img = ex[1]:slice({ 0, 1 }, { top, top + CROP }, { left, left + CROP })
  if math.random() < 0.5 then img = img:flip(2) end
  return { img, ex[2] }
end

local ds = chainer.datasets.TransformDataset(chainer.datasets.TupleDataset(x, t), augment)
local it = chainer.iterators.MultiprocessIterator(ds, opts.batch,
  { n_processes = opts.workers, n_prefetch = opts.prefetch })
local concat = chainer.dataset.concat_examples

local cpu_seconds = B.process_cpu_seconds
local function cpu_all()
  local total = cpu_seconds('self')
  for _, pid in ipairs(it:worker_pids()) do total = total + cpu_seconds(pid) end
  return total
end

local arrays = concat(it:next())
assert(arrays[1].shape[3] == CROP and arrays[1].shape[1] == opts.batch)
local batches = math.floor(opts.epochs * opts.images / opts.batch)
local cpu0, start = cpu_all(), libc.monotonic()
for _ = 1, batches do concat(it:next()) end
local elapsed, cpu = libc.monotonic() - start, cpu_all() - cpu0
it:finalize()
print(string.format('samples/s %.1f', batches * opts.batch / elapsed))
print(string.format('cpu_us/sample %.2f', cpu / (batches * opts.batch) * 1e6))

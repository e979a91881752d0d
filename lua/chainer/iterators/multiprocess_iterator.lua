-- iterators/multiprocess_iterator.lua: MultiprocessIterator, a SerialIterator
-- whose examples are loaded by worker processes (Chainer's
-- chainer.iterators.MultiprocessIterator).
--
--   MultiprocessIterator(dataset, batch_size, {loop = true, shuffle = nil,
--     n_processes = <CPUs>, n_prefetch = 1, shared_mem = nil, order_sampler = nil,
--     dataset_timeout = 30, maxtasksperchild = nil})
--   MultiprocessIterator(dataset, batch_size, repeat, shuffle, n_processes, n_prefetch,
--     shared_mem, order_sampler, dataset_timeout, maxtasksperchild)   -- Chainer's positional order
--
-- The workers are forks of this process, started on the first next(): they
-- run the dataset's get_example (TransformDataset augmentation, image
-- decoding, any Lua dataset) in parallel and hand the examples back through
-- shared memory (worker_pool.lua).  The order is computed here, by the same
-- state machine and order sampler as SerialIterator, so for the same seed
-- the batches hold the same examples in the same order.
--
-- Each batch is cut into chunks of max(batch_size // n_processes // 2, 1)
-- examples (Chainer's chunk size); chunk c goes to worker c % n_processes,
-- always, so each worker sees a fixed sequence of examples.  Worker k (the
-- k-th worker started by this iterator, counting replacements) seeds the
-- runtime's random stream and math.random with a seed made from the
-- iterator's base seed (drawn from the global CPU stream when the iterator
-- is built) and k: random transforms differ between workers and a run
-- repeats exactly under the same chainer.tensor.random.seed.
--
-- n_prefetch batches are queued after the one handed out.  Epoch fields
-- describe the batches handed out; serialize saves that state with
-- Chainer's keys.  reset(), loading a snapshot, an error raised in a worker
-- and a dead worker stop the workers and drop the queued batches; the next
-- next() starts fresh workers and carries on from the batch after the last
-- one handed out (after an error, the failed batch is tried again).
-- finalize() (or garbage collection) stops and reaps the workers.
local Iterator = require 'chainer.dataset.iterator'
local P = require 'chainer.dataset.protocol'
local serial = require 'chainer.iterators.serial_iterator'
local S = require 'chainer.iterators.state'
local pool_mod = require 'chainer.iterators.worker_pool'
local codec = require 'chainer.iterators.value_codec'
local convert = require 'chainer.dataset.convert'
local rng = require 'chainer.dataset.rng'
local args = require 'chainer._args'
local ffi = require 'ffi'

local M = {}

local NAME = 'MultiprocessIterator'
local AUTO_BYTES_PER_EXAMPLE = 1024 * 1024     -- shared_mem = nil: 1 MiB of address space per example
local AUTO_TOTAL_BYTES = 512 * 1024 * 1024     -- ... but at most this much in all
local SLOT_OVERHEAD = 4096                     -- tags and shapes besides the tensors' bytes
local SEED_STEP = 1000003                      -- between the seeds of successive workers

local SIGNATURE = args.signature({ 'loop', 'shuffle', 'n_processes', 'n_prefetch', 'shared_mem', 'order_sampler',
  'dataset_timeout', 'maxtasksperchild' }, { 'repeat', 'repeat_' })

local function positive_integer(v, what, level, max)
  if type(v) ~= 'number' or v ~= math.floor(v) or v < 1 or (max and v > max) then
    error(string.format('%s: %s must be a positive integer%s (got %s)', NAME, what,
      max and (' up to ' .. max) or '', tostring(v)), level + 1)
  end
  return v
end

local MultiprocessIterator = Iterator:extend(NAME)
M.MultiprocessIterator = MultiprocessIterator

function MultiprocessIterator:init(dataset, batch_size, ...)
  serial.check_batch_size(NAME, batch_size, 3)
  local loop, sampler, opts = serial.read_arguments(NAME, SIGNATURE, 3, select('#', ...), ...)
  self.n_processes = positive_integer(opts.n_processes or pool_mod.cpu_count(), 'n_processes', 3, 256)
  self.n_prefetch = positive_integer(opts.n_prefetch or 1, 'n_prefetch', 3)
  if opts.shared_mem ~= nil then self.shared_mem = positive_integer(opts.shared_mem, 'shared_mem', 3) end
  local timeout = opts.dataset_timeout
  if timeout == nil then timeout = 30.0 end
  if timeout ~= false and (type(timeout) ~= 'number' or not (timeout > 0)) then
    error(string.format('%s: dataset_timeout must be a positive number of seconds, or false for no warning ' ..
      '(got %s)', NAME, tostring(timeout)), 3)
  end
  self.dataset_timeout = timeout
  if opts.maxtasksperchild ~= nil then
    self.maxtasksperchild = positive_integer(opts.maxtasksperchild, 'maxtasksperchild', 3)
  end
  self.dataset = dataset
  self.batch_size = batch_size
  self._epoch_size = P.len(dataset, NAME)
  self._repeat, self.order_sampler = loop, sampler
  self['repeat'] = loop
  self._chunk = math.max(math.floor(batch_size / self.n_processes / 2), 1)
  self._base_seed = rng.fresh_seed()
  self._workers_started = 0
  self._queue, self._qhead, self._qtail = {}, 1, 0
  self:reset()
end

-- Stops the workers (if any) and forgets the queued batches.
local function stop_workers(self)
  if self._pool ~= nil then
    self._workers_started = self._workers_started + self._pool.started
    self._pool:shutdown()
    self._pool = nil
  end
  self._queue, self._qhead, self._qtail = {}, 1, 0
end

-- ... and restarts the look-ahead from the last batch handed out.
local function rewind(self)
  stop_workers(self)
  self._ahead = S.copy(self._state)
  S.set_sampler_state(self.order_sampler, self._sampler_visible)
end

local sync = S.sync

function MultiprocessIterator:reset()
  stop_workers(self)
  -- the look-ahead may have drawn later epochs' orders: draw from where the batches handed out left it
  S.set_sampler_state(self.order_sampler, self._sampler_visible)
  local n = P.len(self.dataset, NAME)
  self._epoch_size = n
  self._state = { pos = 0, epoch = 0, is_new_epoch = false, order = S.new_order(self.order_sampler, n) }
  self._ahead = S.copy(self._state)
  self._sampler_visible = S.sampler_state(self.order_sampler)
  self._prev = -1
  self.iteration = 0
  sync(self)
end

local function start_pool(self)
  local n = self.n_processes
  local chunks_per_worker = math.ceil(math.ceil(self.batch_size / self._chunk) / n)
  local slot_bytes
  if self.shared_mem then
    slot_bytes = self.shared_mem * self._chunk + SLOT_OVERHEAD
  else
    local slots = n * chunks_per_worker * self.n_prefetch
    slot_bytes = math.min(AUTO_BYTES_PER_EXAMPLE * self._chunk, math.floor(AUTO_TOTAL_BYTES / slots))
  end
  local base, before = self._base_seed, self._workers_started
  self._pool = pool_mod.new {
    dataset = self.dataset, n_workers = n, slots = chunks_per_worker * self.n_prefetch,
    slot_bytes = slot_bytes, max_tasks = self.maxtasksperchild, dataset_timeout = self.dataset_timeout,
    name = NAME,
    seed_of = function(k) return (base + (before + k) * SEED_STEP) % 2 ^ 52 end,
  }
end

-- Starts loading batch idx: its chunks go to the workers in turn.
local function load(self, e, idx)
  if self._pool == nil then start_pool(self) end
  local c = idx:contiguous()
  local positions = ffi.cast('int64_t *', c.ptr.data) + c.ptr.offset
  e.tasks = {}
  local chunk, first, k = self._chunk, 0, 0
  while first < e.n do
    local count = math.min(chunk, e.n - first)
    e.tasks[#e.tasks + 1] = self._pool:submit(k % self.n_processes + 1, positions, first, count)
    first, k = first + count, k + 1
  end
end

-- Queues batches until n_prefetch are in flight (or the data ends).
local function fill(self) S.fill_queue(self, load) end

local function collect(self, e)
  local parts = {}
  for k, task in ipairs(e.tasks) do
    self._pool:wait(task)
    parts[k] = { ptr = task.ptr, len = task.len, count = task.count }
  end
  local batch = codec.decode_batch(parts, P, convert)
  for _, task in ipairs(e.tasks) do self._pool:release(task) end
  return batch
end

function MultiprocessIterator:next()
  local e = S.queue_head(self, fill)
  if e == nil then return nil end
  local ok, batch = pcall(collect, self, e)
  if not ok then
    rewind(self)
    error(batch, 2)
  end
  S.hand_out(self, e)
  fill(self)   -- the workers load the next batches while the caller computes
  return batch
end

function MultiprocessIterator:serialize(serializer)
  S.serialize_prefetching(self, serializer, serial.serialize_state, stop_workers)
end

function MultiprocessIterator:order() return self._state.order end

-- The worker processes' pids (an empty table while none run).
function MultiprocessIterator:worker_pids()
  if self._pool == nil then return {} end
  return self._pool:pids()
end

function MultiprocessIterator:finalize()
  if self._pool ~= nil then rewind(self) end
end

return M

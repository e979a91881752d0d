-- iterators/multithread_iterator.lua: MultithreadIterator, a SerialIterator
-- whose upcoming batches are gathered on worker threads while the model
-- computes (MultiprocessIterator, in multiprocess_iterator.lua, runs
-- get_example itself in worker processes).
--
--   MultithreadIterator(dataset, batch_size, {loop = true, shuffle = true,
--     order_sampler = s, n_threads = 2, n_prefetch = 2 * n_threads})
--   MultithreadIterator(dataset, batch_size, repeat, shuffle, n_threads, order_sampler)
--   (Chainer's positional order; n_processes is accepted for n_threads.)
--
-- Why C threads: a LuaJIT state runs on one thread, and a Lua dataset (its
-- closures, tables, get_example) cannot move to another state.  So the
-- epoch order is computed here, in Lua, exactly as SerialIterator computes
-- it (same state machine, same sampler), and only the copying of rows is
-- handed to the runtime's worker pool (runtime/io/batch_loader.c).  The
-- batches are therefore identical to SerialIterator's for the same seed,
-- whatever the thread count.  Datasets built from CPU tensors (tensors,
-- TupleDataset / DictDataset of tensors, SubDatasets and splits of those)
-- are prefetched; any other dataset is read on the calling thread, batch by
-- batch, like SerialIterator (is_prefetching() tells which).
--
-- Epoch fields describe the batches handed out, not the ones prefetched;
-- serialize saves that state (Chainer's keys) and a load drops the
-- prefetched batches.  finalize() (or garbage collection) stops the workers;
-- queued copies are dropped, so breaking out of a loop never blocks.
local Iterator = require 'chainer.dataset.iterator'
local P = require 'chainer.dataset.protocol'
local convert = require 'chainer.dataset.convert'
local gather = require 'chainer.dataset.gather'
local serial = require 'chainer.iterators.serial_iterator'
local S = require 'chainer.iterators.state'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local ffi, C, check = T.ffi, T.C, T.check

local M = {}

local MAX_SOURCES = 16

-- How to gather from `ds` with the worker pool: { sources = {tensors},
-- shape = 'single'|'tuple'|'dict', keys = {...}, map = fn(idx) -> base idx }
-- or nil when ds is not backed by CPU tensors.
local function plan(ds)
  local function usable(t)
    return T.is_tensor(t) and t.ptr.dev == -1 and t.ptr.nd >= 1
  end
  local function rows(t)
    if gather.rows_contiguous(t) then return t end
    return t:contiguous()
  end
  if usable(ds) then
    return { sources = { rows(ds) }, shape = 'single' }
  end
  if type(ds) ~= 'table' then return nil end
  local cls = getmetatable(ds)
  local name = type(cls) == 'table' and rawget(cls, '__name') or nil
  if name == 'TupleDataset' then
    local list = ds:datasets()
    if #list > MAX_SOURCES then return nil end
    local src = {}
    for k, d in ipairs(list) do
      if not usable(d) then return nil end
      src[k] = rows(d)
    end
    return { sources = src, shape = 'tuple' }
  elseif name == 'DictDataset' then
    local keys = ds:keys()
    if #keys > MAX_SOURCES then return nil end
    local src = {}
    for i, k in ipairs(keys) do
      local d = ds._datasets[k]
      if not usable(d) then return nil end
      src[i] = rows(d)
    end
    return { sources = src, shape = 'dict', keys = keys }
  elseif name == 'SubDataset' then
    local inner = plan(ds._dataset)
    if inner == nil then return nil end
    local start, order, inner_map = ds._start, ds._order, inner.map
    inner.map = function(idx)
      local j = idx + start
      if order then j = order:take(j, 0) end
      if inner_map then j = inner_map(j) end
      return j
    end
    return inner
  end
  return nil
end

local function shape_arrays(pl, outs)
  if pl.shape == 'single' then return outs[1] end
  if pl.shape == 'tuple' then return outs end
  local d = {}
  for i, k in ipairs(pl.keys) do d[k] = outs[i] end
  return d
end

local copy_state, sampler_state, set_sampler_state = S.copy, S.sampler_state, S.set_sampler_state

local MultithreadIterator = Iterator:extend('MultithreadIterator')
M.MultithreadIterator = MultithreadIterator

-- Chainer's (repeat, shuffle, n_threads, order_sampler); n_processes is
-- accepted for n_threads, n_prefetch (queue depth) is chainlua's own.
local SIGNATURE = args.signature({ 'loop', 'shuffle', 'n_threads', 'order_sampler' },
  { 'repeat', 'repeat_', 'n_processes', 'n_prefetch' })

function MultithreadIterator:init(dataset, batch_size, ...)
  serial.check_batch_size('MultithreadIterator', batch_size, 3)
  local loop, sampler, opts = serial.read_arguments('MultithreadIterator', SIGNATURE, 3, select('#', ...), ...)
  local n_threads = opts.n_threads or opts.n_processes or 2
  if type(n_threads) ~= 'number' or n_threads ~= math.floor(n_threads) or n_threads < 1 or n_threads > 256 then
    error(string.format('MultithreadIterator: n_threads must be an integer in 1..256 (got %s)',
      tostring(n_threads)), 3)
  end
  local n_prefetch = opts.n_prefetch or 2 * n_threads
  if type(n_prefetch) ~= 'number' or n_prefetch ~= math.floor(n_prefetch) or n_prefetch < 1 then
    error(string.format('MultithreadIterator: n_prefetch must be a positive integer (got %s)',
      tostring(n_prefetch)), 3)
  end
  self.dataset = dataset
  self.batch_size = batch_size
  self.n_threads = n_threads
  self.n_prefetch = n_prefetch
  self._epoch_size = P.len(dataset, 'MultithreadIterator')
  self._repeat, self.order_sampler = loop, sampler
  self['repeat'] = self._repeat
  self._plan = plan(dataset)
  if self._plan then
    local n = #self._plan.sources
    self._src = ffi.new('ch_tensor*[?]', n)
    for k = 1, n do self._src[k - 1] = self._plan.sources[k].ptr end
    self._outs = ffi.new('ch_tensor*[?]', n)
    self._ticket = ffi.new('int64_t[1]')
  end
  self._queue = {}
  self._qhead, self._qtail = 1, 0
  self:reset()
end

function MultithreadIterator:is_prefetching() return self._plan ~= nil end

local function loader(self)
  local l = self._loader
  if l == nil then
    local box = ffi.new('ch_loader*[1]')
    check(C.ch_loader_new(self.n_threads, box), 3)
    l = ffi.gc(box[0], C.ch_loader_free)
    self._loader = l
  end
  return l
end

-- Waits for and discards every prefetched batch.
local function drop_queue(self)
  local q = self._queue
  for i = self._qhead, self._qtail do
    local e = q[i]
    q[i] = nil
    if e and e.ticket then
      check(C.ch_loader_wait(self._loader, e.ticket, self._outs), 3)
      for k = 0, #self._plan.sources - 1 do C.ch_tensor_release(self._outs[k]) end
    end
  end
  self._qhead, self._qtail = 1, 0
end

local sync = S.sync

function MultithreadIterator:reset()
  if self._loader ~= nil then drop_queue(self) end
  -- the look-ahead may have drawn later epochs' orders: draw from where the batches handed out left it
  set_sampler_state(self.order_sampler, self._sampler_visible)
  local n = P.len(self.dataset, 'MultithreadIterator')
  self._epoch_size = n
  self._state = { pos = 0, epoch = 0, is_new_epoch = false, order = S.new_order(self.order_sampler, n) }
  self._ahead = copy_state(self._state)
  self._sampler_visible = sampler_state(self.order_sampler)
  self._prev = -1
  self.iteration = 0
  sync(self)
end

-- Starts gathering batch idx on the worker pool (tensor-backed datasets),
-- or keeps idx to read it on the calling thread.
local function load(self, e, idx)
  local pl = self._plan
  if pl then
    local base = pl.map and pl.map(idx) or idx
    check(C.ch_loader_submit(loader(self), self._src, #pl.sources, base.ptr, self._ticket), 5)
    e.ticket = self._ticket[0]
  else
    e.idx = idx
  end
end

-- Queues batches until n_prefetch are in flight (or the data ends).
local function fill(self) S.fill_queue(self, load) end

function MultithreadIterator:next()
  local e = S.queue_head(self, fill)
  if e == nil then return nil end
  local batch
  if e.ticket then
    local pl = self._plan
    check(C.ch_loader_wait(self._loader, e.ticket, self._outs), 2)
    local outs = {}
    for k = 1, #pl.sources do outs[k] = T.wrap(self._outs[k - 1]) end
    local arrays = shape_arrays(pl, outs)
    batch = convert.attach(P.unstack(arrays, e.n), arrays)
  else
    batch = serial.fetch(self.dataset, e.idx)
  end
  S.hand_out(self, e)
  fill(self)   -- keep the workers busy while the caller computes
  return batch
end

function MultithreadIterator:serialize(serializer)
  S.serialize_prefetching(self, serializer, serial.serialize_state, function(it)
    if it._loader ~= nil then drop_queue(it) end
  end)
end

function MultithreadIterator:order() return self._state.order end

function MultithreadIterator:finalize()
  local l = self._loader
  if l ~= nil then
    self._loader = nil
    self._queue = {}
    self._qhead, self._qtail = 1, 0
    ffi.gc(l, nil)
    C.ch_loader_free(l)
    self._ahead = copy_state(self._state)
    set_sampler_state(self.order_sampler, self._sampler_visible)
  end
end

return M

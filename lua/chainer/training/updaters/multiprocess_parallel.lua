-- MultiprocessParallelUpdater(iterators, optimizer, {converter =, devices =,
-- auto_new_epoch = true, worker_timeout = 300}): Chainer's multi-process
-- data parallelism, on CPU devices and forked worker processes.
--
-- One iterator and one device per process: iterators[1] and the main device
-- belong to this process (the master), iterators[k] and the k-th device to
-- worker process k - 1.  Every step each process takes a batch from its own
-- iterator and computes the loss and gradients of its own copy of the model;
-- the workers' gradients are summed into the master's (Chainer's NCCL
-- reduce with NCCL_SUM: a sum, not a mean), the master's optimizer updates
-- the parameters, and the workers take them before their next step (through
-- shared memory).  As in Chainer, the constructor compensates for the
-- summed gradient: Adam-like optimizers (Adam, AdaGrad, RMSprop and Adam's
-- variants) get eps * n, RMSpropGraves and AdaDelta eps * n^2, any other
-- optimizer with an lr gets lr / n, with a warning on stderr.
--
-- The workers are forks of this process started on the first update, after
-- the master's first forward and backward pass (so lazily initialized
-- parameters, as Linear(nil, n)'s, have their shapes): each holds the
-- model, its iterator and the converter as they were then.  What the workers report is dropped (Chainer's dummy
-- observation); only the master's values reach the trainer.  Each worker
-- computes on one thread.  A worker's error is raised here as an error that
-- names the worker; a worker that dies, or does not finish a step within
-- worker_timeout seconds, stops all the workers (the next update starts
-- fresh ones).  Workers leave with this process (they ask the kernel for
-- SIGKILL when their parent goes) and finalize() stops them.
--
-- Serialization is StandardUpdater's (the main iterator, the optimizer, the
-- model, the iteration count), as in Chainer: the workers' iterators are
-- not saved, and workers started after a resume begin their iterators from
-- the state they had when the updater was built.
local ffi = require 'ffi'
local bit = require 'bit'
local args = require 'chainer._args'
local libc = require 'chainer._libc'
local backend = require 'chainer.backend'
local class = require 'chainer.class'
local cfg = require 'chainer.config'
local reporter_mod = require 'chainer.reporter'
local T = require 'chainer.tensor'
local pool = require 'chainer.iterators.worker_pool'
local P = require 'chainer.dataset.protocol'
local StandardUpdater = require 'chainer.training.updaters.standard'
local util = require 'chainer.training._util'
local C = libc.C

local NAME = 'MultiprocessParallelUpdater'
local MultiprocessParallelUpdater = StandardUpdater:extend(NAME)

local DEFAULT_WORKER_TIMEOUT = 300   -- seconds a step of a worker may take after the master's
local POLL_MS = 200                  -- how often a waiting master also asks waitpid
local ALIGN = 64                     -- bytes; each parameter's block in shared memory starts on a cache line
local REPLY_OK, REPLY_ERROR = 0, 1
local SIGKILL, WNOHANG = 9, 1
local POLLIN, POLLERR, POLLHUP = 1, 8, 16

-- Chainer's (iterators, optimizer, converter, devices, auto_new_epoch); the
-- rest only by name.  A devices table given positionally last reads as
-- the options table: name it.
local SIGNATURE = args.signature({ 'converter', 'devices', 'auto_new_epoch' }, { 'worker_timeout' })

-- True where this updater can run: Linux, with fork and anonymous shared
-- memory (Chainer's available(), which asks for NCCL).
function MultiprocessParallelUpdater.available()
  if ffi.os ~= 'Linux' then return false end
  local probe = pool.map_shared(4096)
  if probe == nil then return false end
  C.munmap(probe, 4096)
  return true
end

---------------------------------------------------------------------------
-- construction
---------------------------------------------------------------------------

-- The device specs in process order, with a name for each: {main = d, x = ...}
-- gives main first, then the other names sorted (Lua tables have no order);
-- a list gives its order, named 'main', '2', '3', ...
local function device_list(devices)
  if type(devices) ~= 'table' then
    args.fail(string.format("%s: devices must be a list of devices or a table {main = <device>, <name> = " ..
      "<device>, ...} (got %s)", NAME, devices == nil and 'nothing' or type(devices)), 4)
  end
  local specs, names = {}, {}
  if devices[1] ~= nil then
    for k in pairs(devices) do
      if type(k) ~= 'number' or k < 1 or k > #devices or k ~= math.floor(k) then
        args.fail(string.format('%s: devices mixes a list and names (key %s); give one or the other', NAME,
          tostring(k)), 4)
      end
    end
    for i = 1, #devices do specs[i], names[i] = devices[i], i == 1 and 'main' or tostring(i) end
  else
    if devices.main == nil then
      args.fail(string.format("%s: devices needs a 'main' device (the master's), as {main = '@numpy', second = " ..
        "'@numpy'}", NAME), 4)
    end
    specs[1], names[1] = devices.main, 'main'
    for _, k in ipairs(util.sorted_keys(devices)) do
      if k ~= 'main' then specs[#specs + 1], names[#names + 1] = devices[k], tostring(k) end
    end
  end
  return specs, names
end

-- Each spec as a CPU Device.  A GPU spec is an error that says why, with
-- or without the CUDA backend (T.device_id only reads the spec).
local function resolve_devices(specs, names)
  local out = {}
  for i, spec in ipairs(specs) do
    local parsed, id = pcall(T.device_id, spec)
    if parsed and id >= 0 then
      args.fail(string.format("%s: device %s is %s, a GPU: chainlua's %s runs its processes on CPU devices " ..
        "('@numpy', 'cpu' or -1) only, since a forked process cannot use its parent's CUDA context; for several " ..
        "GPUs use ParallelUpdater", NAME, names[i], tostring(spec), NAME), 5)
    end
    local ok, device = pcall(backend._resolve, spec, NAME)
    if not ok then args.fail(string.format('%s (device %s)', tostring(device), names[i]), 5) end
    out[i] = device
  end
  return out
end

local function check_iterators(iterators, n)
  if type(iterators) ~= 'table' or iterators[1] == nil or getmetatable(iterators) ~= nil then
    args.fail(string.format('%s: iterators must be a list of iterators, one per device (got %s)', NAME,
      type(iterators)), 4)
  end
  if #iterators ~= n then
    args.fail(string.format('%s: %d iterators for %d devices: give one iterator per device', NAME, #iterators, n), 4)
  end
  local size
  for i, it in ipairs(iterators) do
    if not util.is_iterator(it) then
      args.fail(string.format('%s: iterators[%d] is not an iterator (a table with :next(); got %s)', NAME, i,
        type(it)), 4)
    end
    if it.dataset ~= nil then
      local len = P.len(it.dataset, NAME)
      if size ~= nil and len ~= size then
        args.fail(string.format("%s: the iterators' datasets differ in length (iterators[1]: %d, iterators[%d]: " ..
          "%d); Chainer requires equal lengths", NAME, size, i, len), 4)
      end
      size = size or len
    end
  end
end

-- Chainer's compensation for gradients summed over n processes.
local EPS_BY_N = { Adam = true, AdaGrad = true, RMSprop = true }
local EPS_BY_N2 = { RMSpropGraves = true, AdaDelta = true }

local function adjust_optimizer(optimizer, n)
  local name = tostring(getmetatable(optimizer).__name)
  local adam = require('chainer.optimizers').Adam
  local field, factor
  if EPS_BY_N[name] or class.isinstance(optimizer, adam) then
    field, factor = 'eps', n
  elseif EPS_BY_N2[name] then
    field, factor = 'eps', n * n
  else
    local ok, lr = pcall(function() return optimizer.lr end)
    if not (ok and type(lr) == 'number') then return end
    field, factor = 'lr', 1 / n
  end
  optimizer[field] = optimizer[field] * factor
  io.stderr:write(string.format('%s: optimizer.%s is changed to %.17g for the new batch size\n', NAME, field,
    optimizer[field]))
end

function MultiprocessParallelUpdater:init(iterators, optimizer, ...)
  if not MultiprocessParallelUpdater.available() then
    error(NAME .. ': not available here: it needs fork and shared memory (Linux)', 2)
  end
  local opts = args.parse_at(3, NAME, SIGNATURE, select('#', ...), ...)
  local specs, names = device_list(opts.devices)
  local devices = resolve_devices(specs, names)
  check_iterators(iterators, #devices)
  local timeout = opts.worker_timeout
  if timeout == nil then timeout = DEFAULT_WORKER_TIMEOUT end
  if type(timeout) ~= 'number' or not (timeout > 0) then
    args.fail(string.format('%s: worker_timeout must be a positive number of seconds (got %s)', NAME,
      tostring(timeout)), 3)
  end
  StandardUpdater.init(self, iterators[1], optimizer,
    { converter = opts.converter, auto_new_epoch = opts.auto_new_epoch })
  if #devices > 1 then adjust_optimizer(self._optimizers.main, #devices) end
  self._master = self._optimizers.main.target
  self._devices = devices
  -- how errors name each process
  self._labels = { string.format('the master process (device %s: %s)', names[1], tostring(devices[1])) }
  for k = 2, #devices do
    self._labels[k] = string.format('worker process %d (device %s: %s)', k - 1, names[k], tostring(devices[k]))
  end
  self._mpu_iterators = iterators
  self.worker_timeout = timeout
  self._workers = nil   -- started on the first update
end

---------------------------------------------------------------------------
-- shared memory: the parameters, then one gradient block per worker
---------------------------------------------------------------------------

-- Where each parameter lives in a block: the model's parameters with data,
-- in Chainer's sorted order.
local function make_layout(model)
  local entries, offset = {}, 0
  for name, param in model:namedparams() do
    local d = param._data
    if d ~= nil and tonumber(d.ptr.numel) > 0 then
      if d.ptr.dev ~= -1 then
        error(string.format('%s: parameter %s is on %s; the processes compute on the CPU', NAME, name,
          T.device_name(d.ptr.dev)), 0)
      end
      local numel = tonumber(d.ptr.numel)
      entries[#entries + 1] = { name = name, param = param, shape = d.shape, dtype = d.dtype,
        numel = numel, nbytes = numel * d.itemsize, offset = offset }
      offset = offset + math.ceil(numel * d.itemsize / ALIGN) * ALIGN
    end
  end
  return { entries = entries, block_bytes = math.max(offset, ALIGN) }
end

-- Whether the model's parameters are still those the layout describes.
local function check_layout(self)
  local entries, k = self._layout.entries, 0
  for name, param in self._master:namedparams() do
    local d = param._data
    if d ~= nil and tonumber(d.ptr.numel) > 0 then
      k = k + 1
      local e = entries[k]
      if e == nil or e.param ~= param or e.dtype ~= d.dtype or e.numel ~= tonumber(d.ptr.numel) then
        error(string.format('%s: the parameters of the model changed after the worker processes started (at %s); ' ..
          'the model must keep its parameters, their shapes and dtypes', NAME, name), 0)
      end
    end
  end
  if k ~= #entries then
    error(string.format('%s: the model lost parameters after the worker processes started', NAME), 0)
  end
end

local u8p = ffi.typeof('uint8_t *')

local function bytes_of(t)
  return ffi.cast(u8p, t.ptr.data) + tonumber(t.ptr.offset) * t.itemsize
end

-- Copies each parameter's data (kind = 'data') or gradient (kind = 'grad',
-- zeros where there is none, as Chainer's gather) into `block`.
local function store(layout, block, kind)
  for _, e in ipairs(layout.entries) do
    local t = kind == 'data' and e.param._data or e.param.grad
    if t == nil then
      ffi.fill(block + e.offset, e.nbytes, 0)
    else
      t = t:contiguous()
      ffi.copy(block + e.offset, bytes_of(t), e.nbytes)
    end
  end
end

-- A new tensor holding entry e's values in `block`.
local function load_tensor(block, e)
  local t = T.empty(e.shape, e.dtype)
  ffi.copy(bytes_of(t), block + e.offset, e.nbytes)
  return t
end

-- The worker's parameters take the values in `block` (in place where the
-- data is contiguous, as optimizers update them).
local function load_params(layout, block)
  for _, e in ipairs(layout.entries) do
    local d = e.param._data
    if d.is_contiguous then
      ffi.copy(bytes_of(d), block + e.offset, e.nbytes)
    else
      e.param.array = load_tensor(block, e)
    end
  end
end

---------------------------------------------------------------------------
-- one process's share of a step
---------------------------------------------------------------------------

-- Forward and backward of `model` on the next batch of `iterator`; the
-- gradients are left in the model.  `observe` (optional) wraps the forward.
local function compute_gradients(model, iterator, converter, device, observe, who)
  model:cleargrads()
  local batch = iterator:next()
  if batch == nil then
    error(string.format('%s: the iterator of %s is exhausted (use repeating iterators for training)', NAME, who), 0)
  end
  local in_arrays = converter(batch, device)
  local forward = function() return util.call_with_arrays(model, in_arrays) end
  local loss = cfg.force_backprop_mode(function()
    if observe then return observe(forward) end
    return forward()
  end)
  model:cleargrads()
  loss:backward()
end

---------------------------------------------------------------------------
-- the worker side (runs in a forked child)
---------------------------------------------------------------------------

-- The protocol: the master writes one STEP word to a worker's task pipe
-- (the parameters are in shared memory by then); the worker answers with
-- {REPLY_OK or REPLY_ERROR, message length} and the message.  Closing the
-- task pipe tells the worker to leave.
local STEP = 1
local word = ffi.typeof('int64_t[2]')
local step_command = ffi.new('int64_t[1]', STEP)

local function worker_main(self, k, task_fd, result_fd)
  local model, iterator = self._master, self._mpu_iterators[k]
  local device, layout, shm = self._devices[k], self._layout, self._shm
  local params_block = shm
  local grads_block = shm + (k - 1) * layout.block_bytes
  -- Chainer's worker reporter: the model observed as 'main', reports dropped
  local reporter = reporter_mod.Reporter()
  reporter:add_observer('main', model)
  reporter:add_observers('main', model:namedlinks { skipself = true })
  local observe = function(forward) return reporter:scope({}, forward) end
  local command = ffi.new('int64_t[1]')
  while true do
    if not pool.read_all(task_fd, ffi.cast(u8p, command), 8) or command[0] ~= STEP then break end   -- finalize
    local ok, err = xpcall(function()
      load_params(layout, params_block)
      compute_gradients(model, iterator, self.converter, device, observe, self._labels[k])
      store(layout, grads_block, 'grad')
      model:cleargrads()
    end, debug.traceback)
    local message = ok and '' or tostring(err)
    local reply = word()
    reply[0], reply[1] = ok and REPLY_OK or REPLY_ERROR, #message
    local out = ffi.string(reply, ffi.sizeof(reply)) .. message
    if not pool.write_all(result_fd, ffi.cast(u8p, out), #out) then break end
  end
  if iterator.finalize then pcall(iterator.finalize, iterator) end
  return 0
end

---------------------------------------------------------------------------
-- the master side
---------------------------------------------------------------------------

-- Stops every worker (they leave when their task pipe closes; a worker
-- still there after a second is killed) and frees the shared memory.
local function stop_workers(workers, shm, shm_bytes, kill_first)
  if kill_first then
    for _, w in ipairs(workers) do if w.pid then C.kill(w.pid, SIGKILL) end end
  end
  for _, w in ipairs(workers) do pool.close_worker_fds(w) end
  for _, w in ipairs(workers) do
    if w.pid then pool.reap(w, 1.0); w.pid = nil end
  end
  if shm ~= nil then C.munmap(shm, shm_bytes) end
end

local function shutdown(self, kill_first)
  local workers = self._workers
  if workers == nil then return end
  self._workers = nil
  ffi.gc(self._guard, nil)
  self._guard = nil
  stop_workers(workers, self._shm, self._shm_bytes, kill_first)
  self._shm, self._shm_bytes, self._layout = nil, nil, nil
end

local function start_workers(self)
  local n = #self._devices
  self._master:to_device(self._devices[1])
  local layout = make_layout(self._master)
  local bytes = n * layout.block_bytes
  local shm = pool.map_shared(bytes)
  if shm == nil then
    error(string.format('%s: cannot map %d bytes of shared memory for the worker processes (errno %d)', NAME, bytes,
      ffi.errno()), 0)
  end
  self._layout, self._shm, self._shm_bytes = layout, shm, bytes
  pool.ignore_sigpipe()
  local workers = {}
  self._workers = workers
  local owner = libc.getpid()
  -- a forgotten updater (no finalize) stops its workers when collected,
  -- in the process that started them only
  self._guard = ffi.gc(ffi.new('char[1]'), function()
    if libc.getpid() == owner then stop_workers(workers, shm, bytes, false) end
  end)
  for k = 2, n do
    local ok, w = pcall(pool.fork_worker, NAME, owner, function(task_fd, result_fd)
      return worker_main(self, k, task_fd, result_fd)
    end)
    if not ok then
      shutdown(self, true)
      error(w, 0)
    end
    w.label = string.format('%s, pid %d)', self._labels[k]:sub(1, -2), w.pid)
    workers[#workers + 1] = w
  end
end

-- Hands the current parameters to the workers and starts their step.
local function start_step(self)
  store(self._layout, self._shm, 'data')
  for _, w in ipairs(self._workers) do
    -- (a dead worker fails this write: its result pipe says so in await_workers)
    pool.write_all(w.task_fd, ffi.cast(u8p, step_command), 8)
  end
end

-- A worker gone or stuck: stop them all and raise.
local function fail_stopped(self, w, what)
  local label = w.label
  shutdown(self, true)
  error(string.format('%s: %s %s; all worker processes were stopped (the next update starts new ones)', NAME,
    label, what), 0)
end

local function read_reply(self, w)
  local reply = word()
  if not pool.read_all(w.result_fd, ffi.cast(u8p, reply), ffi.sizeof(reply)) then
    pool.close_worker_fds(w)
    local status = pool.reap(w, 1.0)
    w.pid = nil
    fail_stopped(self, w, pool.describe_status(status))
  end
  local n = tonumber(reply[1])
  if tonumber(reply[0]) == REPLY_OK then return nil end
  local buf = ffi.new('uint8_t[?]', math.max(n, 1))
  if not pool.read_all(w.result_fd, buf, n) then return '(the message was cut short)' end
  return ffi.string(buf, n)
end

-- Waits for every worker's answer to the step; raises the first worker's
-- error (after all have answered, so the next step starts in step).
local function await_workers(self)
  local workers = self._workers
  local waiting, left = {}, #workers
  for i = 1, #workers do waiting[i] = true end
  local errors = {}
  local fds = ffi.new('chainlua_pollfd[?]', #workers)
  local deadline = libc.monotonic() + self.worker_timeout
  while left > 0 do
    local nfds, owners = 0, {}
    for i, w in ipairs(workers) do
      if waiting[i] then
        fds[nfds].fd, fds[nfds].events, fds[nfds].revents = w.result_fd, POLLIN, 0
        owners[nfds] = i
        nfds = nfds + 1
      end
    end
    local r = C.poll(fds, nfds, POLL_MS)
    if r > 0 then
      for j = 0, nfds - 1 do
        if bit.band(fds[j].revents, POLLIN + POLLHUP + POLLERR) ~= 0 then
          local i = owners[j]
          local message = read_reply(self, workers[i])
          if message then errors[#errors + 1] = { w = workers[i], message = message } end
          waiting[i], left = false, left - 1
        end
      end
    else
      local status = ffi.new('int[1]')
      for i, w in ipairs(workers) do
        if waiting[i] and C.waitpid(w.pid, status, WNOHANG) == w.pid then
          w.pid = nil
          fail_stopped(self, w, pool.describe_status(status[0]))
        end
      end
      if libc.monotonic() > deadline then
        for i, w in ipairs(workers) do
          if waiting[i] then
            fail_stopped(self, w, string.format('did not finish its step within worker_timeout = %g s', self.worker_timeout))
          end
        end
      end
    end
  end
  if #errors > 0 then
    local e = errors[1]
    error(string.format('%s: %s raised an error: %s', NAME, e.w.label, e.message), 0)
  end
end

-- A tensor over entry e's values in `block`, sharing the mapping's memory
-- (ch_wrap_buffer: no copy, no free).  Kept on the entry, which goes with
-- its mapping (stop_workers drops the layout before unmapping).
local function block_view(block, e)
  local n, shape = T.shape_arg(e.shape, NAME)
  T.check(T.C.ch_wrap_buffer(T.dtype_code(e.dtype), n, shape, block + e.offset, T.box), 2)
  local v = T.wrap(T.box[0])
  return v
end

-- Sums the workers' gradients into the master's (every parameter gets one,
-- zeros where no process had a gradient, as Chainer's scatter_grads).  The
-- sum goes into a tensor this updater keeps per parameter (no new memory
-- per step; like Chainer's in-place scatter, a gradient read from the
-- model is overwritten by the next update), other dtypes (float16) into
-- new tensors.
local function reduce_gradients(self)
  local layout, shm = self._layout, self._shm
  for _, e in ipairs(layout.entries) do
    local g = e.param.grad
    if e.dtype == 'float32' or e.dtype == 'float64' then
      -- the master's gradient plus each worker's in device order, one
      -- vectorised pass per worker over the shared blocks
      if not e.views then
        e.views = {}
        for k = 2, #self._devices do e.views[k] = block_view(shm + (k - 1) * layout.block_bytes, e) end
      end
      e.sum = e.sum or T.empty(e.shape, e.dtype)
      if g == nil then e.sum:fill_(0) else e.sum:copy_(g) end
      for k = 2, #self._devices do T.add(e.sum, e.views[k], e.sum) end
      e.param.grad = e.sum
    else
      if g == nil then g = T.zeros(e.shape, e.dtype) end
      for k = 2, #self._devices do g = g + load_tensor(shm + (k - 1) * layout.block_bytes, e) end
      e.param.grad = g
    end
  end
end

function MultiprocessParallelUpdater:update_core()
  local opt = self._optimizers.main
  local iterator = self._iterators.main
  local parallel = #self._devices > 1
  local running = self._workers ~= nil
  if running then
    check_layout(self)
    start_step(self)
  end
  local ok, err = pcall(compute_gradients, self._master, iterator, self.converter, self._devices[1], nil,
    self._labels[1])
  if not ok then
    if running then pcall(await_workers, self) end   -- their answers to this step, so the next starts clean
    error(err, 0)
  end
  if parallel then
    if not running then
      start_workers(self)
      start_step(self)
    end
    await_workers(self)
    reduce_gradients(self)
  end
  opt:update()
  if self.auto_new_epoch and iterator.is_new_epoch and opt.new_epoch then opt:new_epoch({ auto = true }) end
end

-- The worker processes' pids, in device order (empty before the first
-- update and after finalize).
function MultiprocessParallelUpdater:worker_pids()
  local out = {}
  for i, w in ipairs(self._workers or {}) do out[i] = w.pid end
  return out
end

function MultiprocessParallelUpdater:finalize()
  shutdown(self, false)
  for k = 2, #self._mpu_iterators do
    local it = self._mpu_iterators[k]
    if it.finalize then it:finalize() end
  end
  StandardUpdater.finalize(self)
end

return MultiprocessParallelUpdater

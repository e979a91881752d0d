-- iterators/worker_pool.lua: forked worker processes that run a dataset's
-- get_example for MultiprocessIterator (internal).
--
-- Each worker is a fork of the parent, so it already holds the dataset (Lua
-- tables, closures, tensors): nothing is pickled on the way in.  The parent
-- sends a task (0-based dataset positions) down the worker's task pipe; the
-- worker fetches the examples, encodes them (value_codec) into its
-- shared-memory slot for that task, and writes a small header to its result
-- pipe.  A result that does not fit the slot follows the header through the
-- pipe instead, so nothing is ever cut short.
--
-- Faults are the parent's business:
--   * get_example raising: the worker reports the message and the index,
--     and keeps serving;
--   * a worker dying (kill -9, a crash): its result pipe reaches end of file
--     (or waitpid sees it gone, checked every POLL_MS), and wait() raises an
--     error naming the worker, its pid, the signal or exit code and the
--     examples it was loading;
--   * the parent dying: workers ask the kernel for SIGKILL when their parent
--     goes (PR_SET_PDEATHSIG), check the parent is still theirs right after
--     the fork, and leave when the task pipe reaches end of file.
-- shutdown() closes the task pipes (workers leave at once), then reaps every
-- worker, killing those that have not left within a second: no zombies.
--
-- The parent never blocks writing a task (its task pipes are non-blocking,
-- the rest queued and flushed while it waits), so a worker that is blocked
-- writing a large result to the parent can always finish.
local ffi = require 'ffi'
local bit = require 'bit'
local libc = require 'chainer._libc'
local codec = require 'chainer.iterators.value_codec'
local P = require 'chainer.dataset.protocol'
local T = require 'chainer.tensor'
local C = libc.C

local M = {}

-- Linux constants (x86-64 and arm64 agree on all of these).
local EINTR, EAGAIN = 4, 11
local SIGINT, SIGKILL, SIGPIPE = 2, 9, 13
local PR_SET_PDEATHSIG = 1
local F_GETFL, F_SETFL, O_NONBLOCK = 3, 4, 2048
local POLLIN, POLLOUT, POLLERR, POLLHUP = 1, 4, 8, 16
local WNOHANG = 1
local PROT_RW, MAP_SHARED, MAP_ANONYMOUS, MAP_NORESERVE = 3, 1, 0x20, 0x4000
local SC_NPROCESSORS_ONLN = 84
local SIG_IGN = ffi.cast('chainlua_sighandler', 1)
local MAP_FAILED = ffi.cast('void *', -1)

local POLL_MS = 200            -- how often a waiting parent also asks waitpid
local REAP_GRACE_S = 1.0       -- how long shutdown waits before SIGKILL

-- header words: task (parent -> worker) and result (worker -> parent)
local TASK_WORDS, RESULT_WORDS = 3, 5          -- int64 each
local KIND_RESULT, KIND_ERROR = 1, 2
local FLAG_IN_PIPE, FLAG_RETIRING = 1, 2

local SIGNAL_NAMES = { [1] = 'SIGHUP', [2] = 'SIGINT', [3] = 'SIGQUIT', [4] = 'SIGILL', [6] = 'SIGABRT',
  [7] = 'SIGBUS', [8] = 'SIGFPE', [9] = 'SIGKILL', [11] = 'SIGSEGV', [13] = 'SIGPIPE', [15] = 'SIGTERM' }

-- The parent's ends of every live worker pipe in this process: a new
-- worker closes them all, so each pipe has exactly one writer and one
-- reader and end of file means what it says.
local parent_fds = {}

function M.cpu_count()
  local n = tonumber(C.sysconf(SC_NPROCESSORS_ONLN))
  if n == nil or n < 1 then return 1 end
  return n
end

-- Moves n bytes with op = C.read or C.write, retrying after signals;
-- false at end of file or on an error.
local function transfer_all(op, fd, ptr, n)
  local done = 0
  while done < n do
    local r = tonumber(op(fd, ptr + done, n - done))
    if r == 0 then return false end
    if r < 0 then
      if ffi.errno() ~= EINTR then return false end
    else
      done = done + r
    end
  end
  return true
end

-- A write to a dead worker is then an error code, not the parent's death.
function M.ignore_sigpipe() C.signal(SIGPIPE, SIG_IGN) end

local function read_all(fd, ptr, n) return transfer_all(C.read, fd, ptr, n) end
local function write_all(fd, ptr, n) return transfer_all(C.write, fd, ptr, n) end

-------------------------------------------------------------------------------
-- The worker side (runs in the child and never returns).

local function worker_loop(cfg, task_fd, result_fd)
  local head = ffi.new('int64_t[?]', TASK_WORDS)
  local out = ffi.new('int64_t[?]', RESULT_WORDS)
  local idx_cap, idx = 0, nil
  local encoder = codec.Encoder(nil, 0)
  local done_examples = 0
  local function send(kind, seq, count, ptr, nbytes, flags)
    out[0], out[1], out[2], out[3], out[4] = kind, seq, count, nbytes, flags
    if not write_all(result_fd, ffi.cast('uint8_t *', out), 8 * RESULT_WORDS) then return false end
    if bit.band(flags, FLAG_IN_PIPE) ~= 0 and nbytes > 0 then
      return write_all(result_fd, ffi.cast('uint8_t *', ptr), nbytes)
    end
    return true
  end
  while true do
    if not read_all(task_fd, ffi.cast('uint8_t *', head), 8 * TASK_WORDS) then return 0 end   -- parent gone/done
    local seq, slot, n = head[0], tonumber(head[1]), tonumber(head[2])
    if n > idx_cap then idx_cap = n; idx = ffi.new('int64_t[?]', n) end
    if not read_all(task_fd, ffi.cast('uint8_t *', idx), 8 * n) then return 0 end
    encoder.block = cfg.shm + slot * cfg.slot_bytes
    encoder.capacity = cfg.slot_bytes
    encoder:restart()
    local failure
    local examples, labels = {}, {}
    for k = 0, n - 1 do
      local i = tonumber(idx[k]) + 1
      local ok, ex = pcall(P.get, cfg.dataset, i)
      if not ok then
        failure = string.format('example %d: %s', i, tostring(ex))
        break
      end
      examples[k + 1], labels[k + 1] = ex, 'example ' .. i
    end
    if not failure then
      local ok, err = pcall(encoder.put_chunk, encoder, examples, labels)
      if not ok then failure = tostring(err) end
    end
    done_examples = done_examples + n
    local retiring = cfg.max_tasks ~= nil and done_examples >= cfg.max_tasks
    local flags = retiring and FLAG_RETIRING or 0
    local ok
    if failure then
      ok = send(KIND_ERROR, seq, 0, failure, #failure, flags + FLAG_IN_PIPE)
    elseif encoder:in_block() then
      ok = send(KIND_RESULT, seq, n, nil, encoder.len, flags)
    else
      ok = send(KIND_RESULT, seq, n, encoder.ptr, encoder.len, flags + FLAG_IN_PIPE)
    end
    if not ok or retiring then return 0 end
  end
end

-- What every worker does first, in the child: leave with the parent, leave
-- Ctrl-C to it, close its ends of the other workers' pipes, and run on one
-- thread (the parent's OpenMP team does not exist here).  False when the
-- parent is already gone.
local function child_prologue(parent_pid)
  C.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
  if C.getppid() ~= parent_pid then return false end   -- the parent left before prctl
  C.signal(SIGINT, SIG_IGN)
  for fd in pairs(parent_fds) do C.close(fd) end
  parent_fds = {}
  T.C.ch_set_num_threads(1)
  -- A worker's os.exit (a dataset's get_example may call it) leaves with
  -- _exit, as a forked child should: exit() would run the parent's atexit
  -- handlers in the copy (its LeakSanitizer check, flushes of the parent's
  -- files).  The parent reports the exit code as for any worker exit.
  os.exit = function(code)
    pcall(io.stdout.flush, io.stdout)
    pcall(io.stderr.flush, io.stderr)
    C._exit(code == nil and 0 or code == true and 0 or code == false and 1 or tonumber(code) or 1)
  end
  return true
end

-- fork_worker(name, parent_pid, child_main): forks a worker process joined
-- to the parent by two pipes, a task pipe (parent -> worker) and a result
-- pipe (worker -> parent).  The child runs child_prologue, then
-- child_main(task_fd, result_fd), and leaves with the exit code it returns
-- (1 after an error, which goes to stderr under `name`).  The parent gets
-- {pid =, task_fd =, result_fd =}; its two fds are registered, so workers
-- forked later (by any pool or updater) close them.  Also used by
-- training.updaters.MultiprocessParallelUpdater.
function M.fork_worker(name, parent_pid, child_main)
  local tfd, rfd = ffi.new('int[2]'), ffi.new('int[2]')
  if C.pipe(tfd) ~= 0 then error(string.format('%s: pipe failed (errno %d)', name, ffi.errno()), 0) end
  if C.pipe(rfd) ~= 0 then
    C.close(tfd[0]); C.close(tfd[1])
    error(string.format('%s: pipe failed (errno %d)', name, ffi.errno()), 0)
  end
  io.stdout:flush(); io.stderr:flush()   -- or the child would print the parent's buffered output again
  local pid = C.fork()
  if pid == 0 then
    C.close(tfd[1]); C.close(rfd[0])
    local code = 1
    local ok, err = pcall(function()
      if child_prologue(parent_pid) then code = child_main(tfd[0], rfd[1]) end
    end)
    if not ok then
      pcall(io.stderr.write, io.stderr, string.format('%s worker: %s\n', name, tostring(err)))
    end
    pcall(io.stdout.flush, io.stdout)
    pcall(io.stderr.flush, io.stderr)
    C._exit(code)
  end
  C.close(tfd[0]); C.close(rfd[1])
  if pid < 0 then
    C.close(tfd[1]); C.close(rfd[0])
    error(string.format('%s: fork failed (errno %d)', name, ffi.errno()), 0)
  end
  parent_fds[tfd[1]], parent_fds[rfd[0]] = true, true
  return { pid = tonumber(pid), task_fd = tfd[1], result_fd = rfd[0] }
end

-------------------------------------------------------------------------------
-- The parent side.

-- `bytes` of memory shared with the workers forked afterwards (anonymous,
-- reserved lazily), as a uint8_t pointer, or nil (errno tells why).
-- Give it back with C.munmap(ptr, bytes).
function M.map_shared(bytes)
  local shm = C.mmap(nil, bytes, PROT_RW, MAP_SHARED + MAP_ANONYMOUS + MAP_NORESERVE, -1, 0)
  if shm == MAP_FAILED then return nil end
  return ffi.cast('uint8_t *', shm)
end

local Pool = {}
Pool.__index = Pool

-- new{dataset, n_workers, slots, slot_bytes, seed_of = fn(k) -> seed for the
-- k-th worker started, max_tasks = examples per worker or nil, name}
function M.new(o)
  local self = setmetatable({}, Pool)
  self.dataset, self.n, self.slots, self.slot_bytes = o.dataset, o.n_workers, o.slots, o.slot_bytes
  self.seed_of, self.max_tasks, self.name = o.seed_of, o.max_tasks, o.name or 'MultiprocessIterator'
  self.dataset_timeout = o.dataset_timeout
  self.started = 0
  self.owner = libc.getpid()
  local bytes = self.n * self.slots * self.slot_bytes
  local shm = M.map_shared(bytes)
  if shm == nil then
    error(string.format('%s: cannot map %d bytes of shared memory for the workers (errno %d); give a smaller ' ..
      'shared_mem', self.name, bytes, ffi.errno()), 0)
  end
  self.shm, self.shm_bytes = shm, bytes
  M.ignore_sigpipe()
  self.workers = {}
  self.in_use = {}              -- per worker: tasks submitted and not released
  for w = 1, self.n do self.in_use[w] = 0 end
  self.next_seq = 0
  self.head = ffi.new('int64_t[?]', RESULT_WORDS)
  for w = 1, self.n do self:spawn(w) end
  -- a forgotten pool (no finalize) is shut down by the garbage collector,
  -- but only in the process that made it (a worker holds a copy too)
  local workers, owner = self.workers, self.owner
  self.guard = ffi.gc(ffi.new('char[1]'), function()
    if libc.getpid() == owner then M.stop_workers(workers) end
  end)
  return self
end

function Pool:spawn(w)
  local old = self.workers[w]
  self.started = self.started + 1
  local cfg = { dataset = self.dataset, shm = self.shm + (w - 1) * self.slots * self.slot_bytes,
    slot_bytes = self.slot_bytes, max_tasks = self.max_tasks, seed = self.seed_of(self.started) }
  local child = M.fork_worker(self.name, self.owner, function(task_fd, result_fd)
    T.random.seed(cfg.seed)
    math.randomseed(cfg.seed % 2147483647)
    return worker_loop(cfg, task_fd, result_fd)
  end)
  local pid, tfd1, rfd0 = child.pid, child.task_fd, child.result_fd
  C.fcntl(tfd1, F_SETFL, ffi.new('int', bit.bor(C.fcntl(tfd1, F_GETFL), O_NONBLOCK)))
  local worker = { index = w, pid = pid, task_fd = tfd1, result_fd = rfd0, pending = {}, outstanding = {},
    sent = old and old.sent or 0, seed = cfg.seed }
  self.workers[w] = worker
  return worker
end

-- Queues a task for worker w: `count` 0-based positions from `positions`
-- (an int64_t pointer) starting at `first`.  Returns the task record.
function Pool:submit(w, positions, first, count)
  local worker = self.workers[w]
  if self.in_use[w] >= self.slots then
    error(string.format('%s: internal error: worker %d has %d slots in use (at most %d)', self.name, w,
      self.in_use[w], self.slots), 0)
  end
  self.in_use[w] = self.in_use[w] + 1
  self.next_seq = self.next_seq + 1
  local task = { seq = self.next_seq, slot = worker.sent % self.slots, worker = w, count = count }
  worker.sent = worker.sent + 1
  local msg = ffi.new('int64_t[?]', TASK_WORDS + count)
  msg[0], msg[1], msg[2] = task.seq, task.slot, count
  ffi.copy(msg + TASK_WORDS, positions + first, 8 * count)
  task.message = ffi.string(msg, 8 * (TASK_WORDS + count))
  local positions_1 = {}
  for k = 0, count - 1 do positions_1[k + 1] = tonumber(positions[first + k]) + 1 end
  task.indices = positions_1
  worker.outstanding[#worker.outstanding + 1] = task
  worker.pending[#worker.pending + 1] = task.message
  self:flush(worker)
  return task
end

-- Gives the task's slot back once its bytes have been decoded.
function Pool:release(task)
  if not task.released then
    task.released = true
    self.in_use[task.worker] = self.in_use[task.worker] - 1
  end
end

-- Writes what the task pipe takes now; the rest stays queued.
function Pool:flush(worker)
  local pending = worker.pending
  if worker.task_fd == nil then return end
  while #pending > 0 do
    local s = pending[1]
    local w = tonumber(C.write(worker.task_fd, s, #s))
    if w < 0 then
      local e = ffi.errno()
      if e == EINTR then w = 0
      elseif e == EAGAIN then return
      else return end   -- a dead worker: its result pipe will say so
    end
    if w == #s then table.remove(pending, 1) elseif w > 0 then pending[1] = s:sub(w + 1) end
  end
end

local function describe_status(status)
  local sig = bit.band(status, 0x7f)
  if sig == 0 then return string.format('exited with code %d', bit.band(bit.rshift(status, 8), 0xff)) end
  return string.format('was killed by signal %d%s', sig, SIGNAL_NAMES[sig] and (' (' .. SIGNAL_NAMES[sig] .. ')') or '')
end

-- Reaps a worker that is leaving; kills it if it has not left in `grace` s.
local function reap(worker, grace)
  local status = ffi.new('int[1]')
  local deadline = libc.monotonic() + grace
  while true do
    local r = C.waitpid(worker.pid, status, WNOHANG)
    if r == worker.pid or (r < 0 and ffi.errno() ~= EINTR) then break end
    if libc.monotonic() > deadline then
      C.kill(worker.pid, SIGKILL)
      C.waitpid(worker.pid, status, 0)
      break
    end
    C.poll(nil, 0, 5)
  end
  return status[0]
end

local function close_fds(worker)
  for _, fd in ipairs({ worker.task_fd, worker.result_fd }) do
    if fd and parent_fds[fd] then parent_fds[fd] = nil; C.close(fd) end
  end
  worker.task_fd, worker.result_fd = nil, nil
end

-- Closes every worker's pipes and reaps them all.
function M.stop_workers(workers)
  for _, worker in pairs(workers) do close_fds(worker) end
  for w, worker in pairs(workers) do
    if worker.pid then reap(worker, REAP_GRACE_S); worker.pid = nil end
    workers[w] = nil
  end
end

function Pool:shutdown()
  M.stop_workers(self.workers)
  if self.shm ~= nil then
    C.munmap(self.shm, self.shm_bytes)
    self.shm = nil
  end
  ffi.gc(self.guard, nil)
end

function Pool:worker_failed(worker, status)
  local pending = worker.outstanding[1]
  local what = 'while idle'
  if pending then
    local shown = {}
    for k = 1, math.min(#pending.indices, 8) do shown[k] = pending.indices[k] end
    what = string.format('while loading example%s %s%s', #pending.indices > 1 and 's' or '',
      table.concat(shown, ', '), #pending.indices > 8 and ', ...' or '')
  end
  error(string.format('%s: worker process %d (pid %d) %s %s', self.name, worker.index, worker.pid,
    describe_status(status), what), 0)
end

-- Reads one message from `worker` (its result pipe is readable).
function Pool:receive(worker)
  local head = self.head
  if not read_all(worker.result_fd, ffi.cast('uint8_t *', head), 8 * RESULT_WORDS) then
    close_fds(worker)
    local status = reap(worker, REAP_GRACE_S)
    self:worker_failed(worker, status)
  end
  local kind, seq, count = tonumber(head[0]), tonumber(head[1]), tonumber(head[2])
  local nbytes, flags = tonumber(head[3]), tonumber(head[4])
  local task = table.remove(worker.outstanding, 1)
  if task == nil or task.seq ~= seq then
    error(string.format('%s: internal error: worker %d answered task %d out of turn', self.name, worker.index, seq), 0)
  end
  -- the bytes stay in the slot until the caller releases the task: submit
  -- never hands a worker more than `slots` unreleased tasks
  local ptr = self.shm + (worker.index - 1) * self.slots * self.slot_bytes + task.slot * self.slot_bytes
  if bit.band(flags, FLAG_IN_PIPE) ~= 0 then
    task.buffer = ffi.new('uint8_t[?]', math.max(nbytes, 1))
    ptr = task.buffer
    if not read_all(worker.result_fd, ptr, nbytes) then
      close_fds(worker)
      self:worker_failed(worker, reap(worker, REAP_GRACE_S))
    end
  end
  if kind == KIND_ERROR then
    task.error = string.format('%s: worker process %d (pid %d) failed on %s', self.name, worker.index, worker.pid,
      ffi.string(ptr, nbytes))
  else
    task.ptr, task.len = ptr, nbytes
    if count ~= task.count then
      error(string.format('%s: internal error: worker %d sent %d examples for %d', self.name, worker.index, count,
        task.count), 0)
    end
  end
  task.done = true
  if bit.band(flags, FLAG_RETIRING) ~= 0 then
    -- maxtasksperchild: a fresh worker takes over the tasks still queued
    local left = worker.outstanding
    close_fds(worker)
    reap(worker, REAP_GRACE_S)
    local fresh = self:spawn(worker.index)
    for _, t in ipairs(left) do
      fresh.outstanding[#fresh.outstanding + 1] = t
      fresh.pending[#fresh.pending + 1] = t.message
    end
    self:flush(fresh)
  end
end

-- Waits until `task` is done (task.ptr, task.len: its encoded chunk, valid
-- until release(task)), raising the worker's error or a dead worker's
-- description.
function Pool:wait(task)
  local fds = ffi.new('chainlua_pollfd[?]', 2 * self.n)
  local started = libc.monotonic()
  local warned = false
  while not task.done do
    local nfds, owners = 0, {}
    for _, worker in ipairs(self.workers) do
      fds[nfds].fd, fds[nfds].events, fds[nfds].revents = worker.result_fd, POLLIN, 0
      owners[nfds] = worker
      nfds = nfds + 1
      if #worker.pending > 0 then
        fds[nfds].fd, fds[nfds].events, fds[nfds].revents = worker.task_fd, POLLOUT, 0
        owners[nfds] = worker
        nfds = nfds + 1
      end
    end
    local r = C.poll(fds, nfds, POLL_MS)
    if r > 0 then
      for k = 0, nfds - 1 do
        local ev = fds[k].revents
        if ev ~= 0 then
          local worker = owners[k]
          if worker.result_fd == nil then
            -- replaced earlier in this round (maxtasksperchild)
          elseif fds[k].events == POLLIN then
            if bit.band(ev, POLLIN + POLLHUP + POLLERR) ~= 0 then self:receive(worker) end
          else
            self:flush(worker)
          end
        end
      end
    elseif r == 0 then
      -- nothing to read: is everyone still alive?  (a grandchild holding a
      -- pipe open would hide a death from poll)
      local status = ffi.new('int[1]')
      for _, worker in ipairs(self.workers) do
        if C.waitpid(worker.pid, status, WNOHANG) == worker.pid then
          close_fds(worker)
          self:worker_failed(worker, status[0])
        end
      end
      local waited = libc.monotonic() - started
      if self.dataset_timeout and not warned and waited > self.dataset_timeout then
        warned = true
        io.stderr:write(string.format('%s: waited %.0f s for examples %s from worker process %d (pid %d): a ' ..
          'stalled dataset? (still waiting; see dataset_timeout in docs/iterators.md)\n', self.name, waited,
          table.concat(task.indices, ', ', 1, math.min(#task.indices, 8)), task.worker,
          self.workers[task.worker].pid))
      end
    end
  end
  if task.error then error(task.error, 0) end
  return task
end

-- The worker processes' pids (for tests and diagnostics).
function Pool:pids()
  local out = {}
  for w, worker in ipairs(self.workers) do out[w] = worker.pid end
  return out
end

-- For other users of fork_worker (training.updaters.MultiprocessParallelUpdater).
M.read_all, M.write_all = read_all, write_all
M.reap, M.close_worker_fds, M.describe_status = reap, close_fds, describe_status

return M

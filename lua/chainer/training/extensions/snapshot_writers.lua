-- chainer.training.extensions.snapshot_writers: how a snapshot reaches the
-- disk.  snapshot{writer = w} calls w(filename, outdir, target) with the
-- target already serialized (a table {['path/key'] = tensor}, made by
-- chainer.serializers.serialize in the training process).
--
--   SimpleWriter(savefun, kwds)        writes now, in the training process
--   ThreadWriter / ProcessWriter       one background writer per snapshot;
--                                      a new one first waits for the last
--   ThreadQueueWriter / ProcessQueueWriter
--                                      a queue: snapshots are written one
--                                      after another, in order, while the
--                                      training goes on
--   Writer, StandardWriter, QueueWriter  the base classes
--
-- LuaJIT has no threads, so the "thread" writers and the "process" writers
-- are the same thing here: a forked child process (_forked_worker.lua).
-- The child sees the serialized target as it was at the call (fork copies
-- the memory on write), writes it and exits.  A queue is a line of such
-- children, each waiting for the one before it.  A writer's failure (the
-- child's error message) is raised by the writer's next call or by finalize,
-- which the trainer calls at the end of training (call writer:finalize()
-- yourself when you use a writer without a trainer).
local class = require 'chainer.class'
local args = require 'chainer._args'
local fs = require 'chainer._fs'
local errors = require 'chainer._errors'
local forked = require 'chainer.training.extensions._forked_worker'

local M = {}

local is_callable = require('chainer.optimizer')._callable

local function save_npz(...) return require('chainer.serializers').save_npz(...) end

-- (savefun, kwds) or one options table {savefun =, <savefun's keywords>}
local function savefun_and_kwds(what, savefun, kwds)
  if type(savefun) == 'table' and getmetatable(savefun) == nil and kwds == nil then
    kwds = {}
    for k, v in pairs(savefun) do if k ~= 'savefun' then kwds[k] = v end end
    savefun = savefun.savefun
  end
  if savefun == nil then savefun = save_npz end
  if not is_callable(savefun) then
    error(what .. ': savefun must be a function(path, target[, kwds]) (got ' .. type(savefun) .. ')', 4)
  end
  if kwds ~= nil and type(kwds) ~= 'table' then
    error(what .. ': kwds must be a table of savefun keywords (got ' .. type(kwds) .. ')', 4)
  end
  if kwds ~= nil and next(kwds) == nil then kwds = nil end
  return savefun, kwds
end

-- Raises a background writer's failure.
local function check(what, ok, message)
  if ok == nil and type(message) == 'string' then error(what .. ': ' .. errors.clean(message), 0) end
end

---------------------------------------------------------------------------
-- Writer: the base class
---------------------------------------------------------------------------
local Writer = class.Object:extend('Writer')
class.check_self(Writer)

function Writer:init()
  self._post_save_hooks = {}
end

Writer.__call = function(self)
  error(tostring(getmetatable(self).__name) .. ': a Writer subclass must define __call(filename, outdir, target)', 2)
end

function Writer:finalize() end

-- save(filename, outdir, target, savefun, kwds): savefun(tmp, target[, kwds])
-- writes a temporary beside the file, which is then renamed into place;
-- the post-save hooks (the snapshot's n_retains clean-up) run afterwards.
function Writer:save(filename, outdir, target, savefun, kwds)
  local path = fs.join(outdir, filename)
  local ok, err = fs.write_via_temp(path, function(tmp)
    if kwds then savefun(tmp, target, kwds) else savefun(tmp, target) end
  end)
  if not ok then error('cannot move the snapshot into place: ' .. tostring(err), 0) end
  self:_post_save()
end

-- A function() run right after each save (Chainer's cleanup hook).
function Writer:_add_cleanup_hook(hook)
  if not is_callable(hook) then error('Writer:_add_cleanup_hook: hook must be a function', 2) end
  table.insert(self._post_save_hooks, hook)
end

function Writer:_post_save()
  for _, hook in ipairs(self._post_save_hooks) do hook() end
end
M.Writer = Writer

---------------------------------------------------------------------------
-- SimpleWriter(savefun = save_npz, kwds): writes in the calling process
---------------------------------------------------------------------------
local SimpleWriter = Writer:extend('SimpleWriter')

function SimpleWriter:init(savefun, kwds)
  Writer.init(self)
  self._savefun, self._kwds = savefun_and_kwds('SimpleWriter', savefun, kwds)
end

SimpleWriter.__call = function(self, filename, outdir, target)
  self:save(filename, outdir, target, self._savefun, self._kwds)
end
M.SimpleWriter = SimpleWriter

---------------------------------------------------------------------------
-- StandardWriter(savefun, kwds): a new worker for each snapshot, started by
-- create_worker; a call first joins the previous worker.
---------------------------------------------------------------------------
local StandardWriter = Writer:extend('StandardWriter')

function StandardWriter:init(savefun, kwds)
  Writer.init(self)
  self._savefun, self._kwds = savefun_and_kwds(tostring(getmetatable(self).__name), savefun, kwds)
  self._started = false
  self._finalized = false
end

function StandardWriter:_join()
  local worker = self._worker
  self._started = false
  check(tostring(getmetatable(self).__name), worker:join())
end

StandardWriter.__call = function(self, filename, outdir, target)
  if self._started then self:_join() end
  self._filename = filename
  self._worker = self:create_worker(filename, outdir, target, self._kwds)
  self._worker:start()
  self._started = true
  self._finalized = false
end

-- create_worker(filename, outdir, target, kwds): an object with start()
-- and join(); join may return nil and a message to report a failure.
-- This one runs save in a forked child process.
function StandardWriter:create_worker(filename, outdir, target, kwds)
  local writer, what = self, tostring(getmetatable(self).__name)
  local worker = {}
  function worker.start()
    worker._child = forked.start(function() writer:save(filename, outdir, target, writer._savefun, kwds) end,
      { what = what })
  end
  function worker.join()
    return worker._child:join()
  end
  return worker
end

function StandardWriter:finalize()
  if self._started and not self._finalized then self:_join() end
  self._started = false
  self._finalized = true
end
M.StandardWriter = StandardWriter

-- ThreadWriter / ProcessWriter: Chainer's thread and process writers, both
-- a forked child here.
M.ThreadWriter = StandardWriter:extend('ThreadWriter')
M.ProcessWriter = StandardWriter:extend('ProcessWriter')

---------------------------------------------------------------------------
-- QueueWriter(savefun = save_npz, task = SimpleWriter(savefun)): each call
-- queues task(filename, outdir, target); the tasks run one at a time, in
-- order, in forked children.
---------------------------------------------------------------------------
local QueueWriter = Writer:extend('QueueWriter')
local QUEUE_SIGNATURE = args.signature({ 'savefun', 'task' }, {})

function QueueWriter:init(...)
  Writer.init(self)
  local what = tostring(getmetatable(self).__name)
  local opts = args.parse_at(3, what, QUEUE_SIGNATURE, select('#', ...), ...)
  if opts.task ~= nil then
    if not is_callable(opts.task) then
      error(what .. ': task must be callable as task(filename, outdir, target) (got ' .. type(opts.task) .. ')', 3)
    end
    self._task = opts.task
  else
    self._task = self:create_task(savefun_and_kwds(what, opts.savefun))
  end
  self._pending = {}   -- children started and not yet joined, oldest first
  self._started = true
  self._finalized = false
end

function QueueWriter:create_task(savefun) return SimpleWriter(savefun) end

-- Joins the children at the head of the queue that have finished (all of
-- them with wait = true) and raises the first failure.
function QueueWriter:_collect(wait)
  local what = tostring(getmetatable(self).__name)
  while #self._pending > 0 and (wait or self._pending[1]:done()) do
    local child = table.remove(self._pending, 1)
    check(what, child:join())
  end
end

QueueWriter.__call = function(self, filename, outdir, target)
  self:_collect(false)
  local task, writer = self._task, self
  local last = self._pending[#self._pending]
  local child = forked.start(function()
    task(filename, outdir, target)
    -- Chainer registers n_retains' clean-up on the queue writer but runs
    -- only the task's hooks; here the queue writer's hooks run too.
    if task ~= writer then writer:_post_save() end
  end, { what = tostring(getmetatable(self).__name), after = last })
  table.insert(self._pending, child)
  self._started = true
  self._finalized = false
end

function QueueWriter:finalize()
  if self._started and not self._finalized then self:_collect(true) end
  self._started = false
  self._finalized = true
end
M.QueueWriter = QueueWriter

-- ThreadQueueWriter / ProcessQueueWriter: Chainer's thread and process
-- queues, both a line of forked children here.
M.ThreadQueueWriter = QueueWriter:extend('ThreadQueueWriter')
M.ProcessQueueWriter = QueueWriter:extend('ProcessQueueWriter')

return M

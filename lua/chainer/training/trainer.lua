-- chainer.training.Trainer(updater, stop_trigger, {out = 'result', extensions = {...}})
--
--   local trainer = training.Trainer(updater, {20, 'epoch'}, {out = 'result'})
--   trainer:extend(extensions.LogReport())
--   trainer:extend(lr_drop, {trigger = {10, 'epoch'}, name = 'lr_drop'})
--   trainer:run()
--
-- The loop (Chainer's): the stop trigger is checked before each update;
-- every iteration gets a fresh observation table, the reporter reports into
-- it, the updater makes one step, and then each extension whose trigger
-- fires is called, in descending priority with ties kept in registration
-- order.  `initialize` runs before the loop (also after a resume),
-- `finalize` after it (also after an error), `on_error` on an error.
local class = require 'chainer.class'
local reporter_mod = require 'chainer.reporter'
local triggers = require 'chainer.training.triggers'
local extension = require 'chainer.training.extension'
local util = require 'chainer.training._util'
local args = require 'chainer._args'
local fs = require 'chainer._fs'

local Trainer = class.Object:extend('Trainer')
class.check_self(Trainer)   -- model.cleargrads() (a dot) names the method

local props = {}
Trainer.__index = class.property_index(props)

local sorted_keys = util.sorted_keys

-- Chainer's Trainer(updater, stop_trigger, out, extensions), extend(extension,
-- name, trigger, priority, *, call_before_training), run(show_loop_exception_msg):
-- the arguments after the first ones positional or in a trailing table.
local INIT_SIGNATURE = args.signature { 'out', 'extensions' }
local EXTEND_SIGNATURE = args.signature({ 'name', 'trigger', 'priority' }, { 'call_before_training' })
local RUN_SIGNATURE = args.signature { 'show_loop_exception_msg' }

function Trainer:init(updater, stop_trigger, ...)
  if type(updater) ~= 'table' or type(updater.update) ~= 'function' then
    error('Trainer: updater must be an Updater (got ' .. type(updater) .. ')', 3)
  end
  if type(stop_trigger) == 'string' then
    error("Trainer: stop_trigger must be {length, 'epoch'|'iteration'} or a trigger (got a string)", 3)
  end
  local opts = args.parse_at(3, 'Trainer', INIT_SIGNATURE, select('#', ...), ...)
  self.updater = updater
  self.stop_trigger = triggers.get_trigger(stop_trigger)
  self.observation = {}
  self.out = opts.out or 'result'
  self.reporter = reporter_mod.Reporter()
  local optimizers = updater:get_all_optimizers()
  for _, name in ipairs(sorted_keys(optimizers)) do
    local target = optimizers[name].target
    if target then
      self.reporter:add_observer(name, target)
      if target.namedlinks then
        self.reporter:add_observers(name, target:namedlinks({ skipself = true }))
      end
    end
  end
  self._names = {}         -- extension names in registration order
  self._extensions = {}    -- name -> entry {extension, trigger, priority, seq, call_before_training}
  self._seq = 0
  self._start_at = nil
  self._snapshot_elapsed_time = 0
  self._final_elapsed_time = nil
  self._done = false
  self._is_before_training = false
  updater:connect_trainer(self)
  for _, ext in ipairs(opts.extensions or {}) do self:extend(ext) end
end

-- Elapsed training time in seconds (continues across a resume).
function props.elapsed_time(self)
  local fin = rawget(self, '_final_elapsed_time')
  if fin then return fin end
  local start = rawget(self, '_start_at')
  if start == nil then
    error('Trainer.elapsed_time: training has not been started yet', 2)
  end
  return util.now() - start + rawget(self, '_snapshot_elapsed_time')
end

function props.is_before_training(self)
  return rawget(self, '_is_before_training') == true
end

local function attr(ext, k)
  if type(ext) == 'table' then return ext[k] end
  return nil
end

local function default_name(ext)
  if type(ext) ~= 'table' then return nil end
  local n = ext.default_name
  if n then return n end
  if type(ext.get_default_name) == 'function' then return ext:get_default_name() end
  local mt = getmetatable(ext)
  if type(mt) == 'table' and rawget(mt, '__name') then return rawget(mt, '__name') end
  return nil
end

-- extend(extension, {name =, trigger =, priority =, call_before_training =})
function Trainer:extend(ext, ...)
  local opts = args.parse_at(2, 'Trainer:extend', EXTEND_SIGNATURE, select('#', ...), ...)
  local callable = type(ext) == 'function' or
    (type(ext) == 'table' and getmetatable(ext) and getmetatable(ext).__call ~= nil)
  if not callable then
    error('Trainer:extend: an extension must be a function(trainer) or an object with __call (got ' ..
      type(ext) .. ')', 2)
  end
  local name = opts.name or attr(ext, 'name') or default_name(ext)
  if name == nil then
    -- Lua functions carry no name; Chainer would use __name__
    name = 'extension'
  end
  if name == 'training' then
    error("Trainer:extend: the name 'training' is reserved for the training loop", 2)
  end
  local trigger = opts.trigger
  if trigger == nil then trigger = attr(ext, 'trigger') end
  if trigger == nil then trigger = { 1, 'iteration' } end
  local ok, trig = pcall(triggers.get_trigger, trigger)
  if not ok then error('Trainer:extend: ' .. tostring(trig), 2) end
  local priority = opts.priority or attr(ext, 'priority') or extension.PRIORITY_READER
  local modified = name
  local ordinal = 0
  while self._extensions[modified] do
    ordinal = ordinal + 1
    modified = name .. '_' .. ordinal
  end
  if type(ext) == 'table' then ext.name = modified end
  self._seq = self._seq + 1
  self._extensions[modified] = {
    extension = ext, trigger = trig, priority = priority, seq = self._seq,
    call_before_training = opts.call_before_training == true,
  }
  self._names[#self._names + 1] = modified
  return ext
end

function Trainer:get_extension(name)
  local e = self._extensions[name]
  if e == nil then
    error("Trainer:get_extension: no extension named '" .. tostring(name) .. "'", 2)
  end
  return e.extension
end

-- Entries sorted by priority (descending), registration order on ties.
function Trainer:_sorted_entries()
  local list = {}
  for i, name in ipairs(self._names) do
    list[i] = { name, self._extensions[name] }
  end
  table.sort(list, function(a, b)
    if a[2].priority ~= b[2].priority then return a[2].priority > b[2].priority end
    return a[2].seq < b[2].seq
  end)
  return list
end

local function trigger_finished(t)
  return type(t) == 'table' and t.finished == true
end

-- run{show_loop_exception_msg = true}
function Trainer:run(...)
  local opts = args.parse_at(2, 'Trainer:run', RUN_SIGNATURE, select('#', ...), ...)
  if self._done then error('Trainer:run: cannot run the training loop more than once', 2) end
  fs.mkdir_p(self.out)
  local entries = self:_sorted_entries()
  local n = #entries
  local exts, trigs = {}, {}
  for i, e in ipairs(entries) do exts[i] = e[2].extension trigs[i] = e[2].trigger end

  self._start_at = util.now()
  local ok, err, tb = xpcall(function()
    for i = 1, n do
      local ext = exts[i]
      if type(ext) == 'table' and ext.initialize and not trigger_finished(trigs[i]) then
        ext:initialize(self)
      end
    end
    -- v7 call_before_training: once before the first update
    if self.updater.iteration == 0 then
      local any = false
      for _, e in ipairs(entries) do if e[2].call_before_training then any = true end end
      if any then
        self._is_before_training = true
        local obs = {}
        self.observation = obs
        self.reporter:scope(obs, function()
          for _, e in ipairs(entries) do
            if e[2].call_before_training then e[2].extension(self) end
          end
        end)
        self._is_before_training = false
      end
    end
    local stop = self.stop_trigger
    local updater = self.updater
    local reporter = self.reporter
    local depth = reporter_mod._depth()
    while not stop(self) do
      local obs = {}
      self.observation = obs
      reporter:_enter(obs)
      updater:update()
      for i = 1, n do
        if trigs[i](self) then exts[i](self) end
      end
      reporter:_exit()
    end
    reporter_mod._reset_depth(depth)
  end, function(e)
    return { err = e, tb = debug.traceback('', 2) }
  end)
  local failure
  if not ok then
    failure = err
    reporter_mod._reset_depth(0)
    self._is_before_training = false
    if opts.show_loop_exception_msg ~= false then
      io.stderr:write('Exception in main training loop: ', tostring(failure.err), '\n')
      io.stderr:write('Traceback (most recent call last):', failure.tb, '\n')
      io.stderr:write('Will finalize trainer extensions and updater before reraising the exception.\n')
    end
    for i = 1, n do
      local ext = exts[i]
      if type(ext) == 'table' and ext.on_error then
        local ok2, e2 = pcall(ext.on_error, ext, self, failure.err, failure.tb)
        if not ok2 then
          io.stderr:write('Exception in on_error of extension ', entries[i][1], ': ', tostring(e2), '\n')
        end
      end
    end
  end
  for i = 1, n do
    local ext = exts[i]
    if type(ext) == 'table' and ext.finalize then
      local ok3, e3 = pcall(ext.finalize, ext, self)
      if not ok3 and not failure then failure = { err = e3 } end
    end
  end
  local ok4, e4 = pcall(self.updater.finalize, self.updater)
  if not ok4 and not failure then failure = { err = e4 } end
  self._final_elapsed_time = self.elapsed_time
  self._done = true
  if failure then error(failure.err, 0) end
end

-- Saves or loads everything that changes during training: the updater
-- (iterators, optimizers, models), the stop trigger, each extension and
-- its trigger, and the elapsed time.
function Trainer:serialize(serializer)
  local child = util.child
  self.updater:serialize(child(serializer, 'updater'))
  local st = self.stop_trigger
  if type(st) == 'table' and st.serialize then st:serialize(child(serializer, 'stop_trigger')) end
  local s = child(serializer, 'extensions')
  local t = child(serializer, 'extension_triggers')
  -- a snapshot may hold extensions this trainer does not register (resumed
  -- without a PlotReport, say): Chainer ignores them, and so do we; every
  -- registered extension's keys stay required
  util.tolerate_extra(s)
  util.tolerate_extra(t)
  for _, name in ipairs(self._names) do
    local e = self._extensions[name]
    local ext = e.extension
    if type(ext) == 'table' and ext.serialize then ext:serialize(child(s, name)) end
    if type(e.trigger) == 'table' and e.trigger.serialize then e.trigger:serialize(child(t, name)) end
  end
  if util.is_loading(serializer) then
    self._snapshot_elapsed_time = util.ser_number(serializer, '_snapshot_elapsed_time', 0)
  else
    local el = rawget(self, '_start_at') and self.elapsed_time or rawget(self, '_snapshot_elapsed_time')
    serializer('_snapshot_elapsed_time', el)
  end
end

return Trainer

-- function_hooks/memory_profile.lua: CupyMemoryProfileHook, the memory each
-- function's forward and backward takes from chainlua's allocators (Chainer's
-- hook of the same name, which watches CuPy's memory pool; the name is kept
-- so that scripts port unchanged).
--
--   local hook = chainer.function_hooks.CupyMemoryProfileHook()
--   hook:scope(function() trainer:run() end)
--   hook:print_report()
--   --   FunctionName  UsedBytes  AcquiredBytes  Occurrence
--   --         Linear    5.16MB         1.02MB         390
--
-- It watches the CPU allocator and every GPU's caching allocator together,
-- through the runtime's counters (ch_live_bytes, ch_peak_bytes,
-- ch_cache_bytes).  For each call:
--   used_bytes      the most bytes held by tensors at any moment of the call
--                   beyond those held when it started: what the call needed
--                   from the allocators (CuPy's counts every allocation, so a
--                   temporary freed and allocated again counts twice there and
--                   once here);
--   acquired_bytes  how much what the allocators hold (live + cached) grew
--                   over the call (0 when it did not): memory newly taken from
--                   the system or the driver rather than reused from the cache.
-- The counters are process-wide: work on other threads at the same time is
-- counted too.  The hook resets the runtime's peak counter at every call.
local FunctionHook = require('chainer.function_hook').FunctionHook
local C = require('chainer._lib').C
local report = require 'chainer._timer_report'

local CupyMemoryProfileHook = FunctionHook:extend('CupyMemoryProfileHook')
CupyMemoryProfileHook.name = 'CupyMemoryProfileHook'

-- Chainer's _units and _table: the factor of each unit.
local UNITS = { 'B', 'KB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB' }
local FACTOR = {}
for i, u in ipairs(UNITS) do FACTOR[u] = 1024 ^ (i - 1) end
CupyMemoryProfileHook.table = FACTOR

-- The devices whose allocators are watched: the CPU (-1) and every GPU.
local function devices()
  local list = { -1 }
  local cuda = require 'chainer.cuda'
  if cuda.available then
    for d = 0, cuda.device_count() - 1 do list[#list + 1] = d end
  end
  return list
end

function CupyMemoryProfileHook:init()
  self.call_history = {}       -- { {function name, used_bytes, acquired_bytes, depth}, ... }
  self._devices = devices()
  self._running_stack = {}     -- one frame per call in progress
  self._total_used_bytes = 0
  self._total_acquired_bytes = 0
end

-- Folds the peak each device reached since the last event into every open
-- frame, then restarts the peak from the bytes live now.
local function harvest(self)
  local stack = self._running_stack
  for _, d in ipairs(self._devices) do
    local peak = tonumber(C.ch_peak_bytes(d))
    for i = 1, #stack do
      local f = stack[i]
      if peak > f.max[d] then f.max[d] = peak end
    end
    C.ch_reset_peak_bytes(d)
  end
end

local function preprocess(self)
  harvest(self)
  local frame = { live = {}, held = {}, max = {} }
  for _, d in ipairs(self._devices) do
    local live = tonumber(C.ch_live_bytes(d))
    frame.live[d], frame.max[d] = live, live
    frame.held[d] = live + tonumber(C.ch_cache_bytes(d))
  end
  local stack = self._running_stack
  stack[#stack + 1] = frame
end

local function postprocess(self, func)
  harvest(self)
  local stack = self._running_stack
  local frame = stack[#stack]
  stack[#stack] = nil
  local used, acquired = 0, 0
  for _, d in ipairs(self._devices) do
    used = used + (frame.max[d] - frame.live[d])
    local grown = tonumber(C.ch_live_bytes(d)) + tonumber(C.ch_cache_bytes(d)) - frame.held[d]
    if grown > 0 then acquired = acquired + grown end
  end
  local depth = #stack
  local h = self.call_history
  h[#h + 1] = { func:label(), used, acquired, depth }
  if depth == 0 then
    self._total_used_bytes = self._total_used_bytes + used
    self._total_acquired_bytes = self._total_acquired_bytes + acquired
  end
end

function CupyMemoryProfileHook:forward_preprocess(func) preprocess(self) end
function CupyMemoryProfileHook:forward_postprocess(func) postprocess(self, func) end
function CupyMemoryProfileHook:backward_preprocess(func) preprocess(self) end
function CupyMemoryProfileHook:backward_postprocess(func) postprocess(self, func) end

-- Bytes the outermost calls used / made the allocators acquire (a call
-- inside another is counted in the outer one, as Chainer's).
function CupyMemoryProfileHook:total_used_bytes() return self._total_used_bytes end
function CupyMemoryProfileHook:total_acquired_bytes() return self._total_acquired_bytes end

-- { names = {function names in first-seen order},
--   [name] = {used_bytes = n, acquired_bytes = n, occurrence = n} }
-- (every call, nested ones too, as Chainer's summary).
local FIELDS = { 'used_bytes', 'acquired_bytes' }
function CupyMemoryProfileHook:summary()
  return report.summary(self.call_history, FIELDS)
end

-- Chainer's _choose_unit: the largest unit in which size is at least 1.
local function choose_unit(size)
  local factor = 1
  if size <= 0 then return factor, UNITS[1] end
  for i = 1, #UNITS - 1 do
    if size / (factor * 1024) < 1 then return factor, UNITS[i] end
    factor = factor * 1024
  end
  return factor, UNITS[#UNITS]
end

-- print_report([unit = 'auto'], [file]): one row per function name with the
-- bytes it used and made the allocators acquire and its number of calls.
-- unit: 'auto' (each column in the unit of its largest value), 'auto_foreach'
-- (each value its own) or one of B, KB, MB, GB, TB, PB, EB, ZB.  file: an
-- open file (default io.stdout), or false to only return the text.  Returns
-- the text.
function CupyMemoryProfileHook:print_report(unit, file)
  unit = unit or 'auto'
  if unit ~= 'auto' and unit ~= 'auto_foreach' and not FACTOR[unit] then
    error("CupyMemoryProfileHook.print_report: unit must be 'auto', 'auto_foreach', 'B', 'KB', 'MB', 'GB', " ..
      "'TB', 'PB', 'EB' or 'ZB' (got " .. tostring(unit) .. ')', 2)
  end
  local s = self:summary()
  local used_factor, used_unit, acq_factor, acq_unit
  if unit == 'auto' then
    local max_used, max_acq = 0, 0
    for _, name in ipairs(s.names) do
      max_used = math.max(max_used, s[name].used_bytes)
      max_acq = math.max(max_acq, s[name].acquired_bytes)
    end
    used_factor, used_unit = choose_unit(max_used)
    acq_factor, acq_unit = choose_unit(max_acq)
  elseif unit ~= 'auto_foreach' then
    used_factor, used_unit = FACTOR[unit], unit
    acq_factor, acq_unit = FACTOR[unit], unit
  end
  local rows = { { 'FunctionName', 'UsedBytes', 'AcquiredBytes', 'Occurrence' } }
  for _, name in ipairs(s.names) do
    local r = s[name]
    if unit == 'auto_foreach' then
      used_factor, used_unit = choose_unit(r.used_bytes)
      acq_factor, acq_unit = choose_unit(r.acquired_bytes)
    end
    rows[#rows + 1] = { name, string.format('%3.2f%s', r.used_bytes / used_factor, used_unit),
      string.format('%3.2f%s', r.acquired_bytes / acq_factor, acq_unit), tostring(r.occurrence) }
  end
  return report.write_table(rows, file)
end

return CupyMemoryProfileHook

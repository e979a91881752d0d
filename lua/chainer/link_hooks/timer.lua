-- link_hooks/timer.lua: TimerHook, the wall time of every Link's forward
-- (Chainer's chainer.link_hooks.TimerHook).
--
--   local hook = chainer.link_hooks.TimerHook()
--   hook:scope(function() trainer:run() end)     -- Chainer's `with hook:`
--   hook:print_report()
--       LinkName  ElapsedTime  Occurrence
--         Linear     41.42sec        2100
--            MLP     42.09sec         700
--
-- call_history holds {link class name, seconds} pairs in completion order.
-- Links call links, so times overlap; total_time() counts only the
-- outermost calls.  For a link on a GPU the device is synchronized before
-- each reading, so the times include the kernels.
local LinkHook = require('chainer.link_hook').LinkHook
local now = require('chainer._libc').monotonic

local TimerHook = LinkHook:extend('TimerHook')
TimerHook.name = 'TimerHook'
TimerHook.table = { sec = 1, ms = 1e3, us = 1e6, ns = 1e9 }

function TimerHook:init()
  self.call_history = {}
  self._starts = {}
  self._depth = 0
  self._total_time = 0
end

-- Waits for the link's GPU, if it has one, so the clock sees its work.
local function sync(link)
  local dev = rawget(link, '_device')
  if type(dev) == 'number' and dev >= 0 then require('chainer.cuda').synchronize(dev) end
end

function TimerHook:forward_preprocess(cb)
  sync(cb.link)
  local s = self._starts
  s[#s + 1] = now()
  self._depth = self._depth + 1
end

function TimerHook:forward_postprocess(cb)
  sync(cb.link)
  local s = self._starts
  local elapsed = now() - s[#s]
  s[#s] = nil
  local h = self.call_history
  h[#h + 1] = { getmetatable(cb.link).__name, elapsed }
  self._depth = self._depth - 1
  if self._depth == 0 then self._total_time = self._total_time + elapsed end
end

-- Seconds spent in the outermost link calls.
function TimerHook:total_time() return self._total_time end

-- { names = {link names in first-seen order}, [name] = {elapsed_time = seconds, occurrence = n} }
function TimerHook:summary()
  local out, names = {}, {}
  for _, e in ipairs(self.call_history) do
    local r = out[e[1]]
    if not r then
      r = { elapsed_time = 0, occurrence = 0 }
      out[e[1]] = r
      names[#names + 1] = e[1]
    end
    r.elapsed_time = r.elapsed_time + e[2]
    r.occurrence = r.occurrence + 1
  end
  out.names = names
  return out
end

-- The largest unit in which `seconds` is at least 1 (Chainer's choice).
local function choose_unit(seconds)
  local factor = 1
  for _, unit in ipairs { 'sec', 'ms', 'us' } do
    if seconds * factor >= 1 then return factor, unit end
    factor = factor * 1000
  end
  return factor, 'ns'
end

-- print_report([unit], [file]): one row per link name with its total time
-- and number of calls, right-aligned columns.  unit: 'auto' (default: the
-- unit of the largest time), 'auto_foreach' (each row its own), 'sec',
-- 'ms', 'us' or 'ns'.  file: an open file (default io.stdout), or false to
-- only return the text.  Returns the text.
function TimerHook:print_report(unit, file)
  unit = unit or 'auto'
  local s = self:summary()
  local auto_foreach = unit == 'auto_foreach'
  local factor
  if unit == 'auto' then
    local max = 0
    for _, name in ipairs(s.names) do max = math.max(max, s[name].elapsed_time) end
    factor, unit = choose_unit(max)
  elseif not auto_foreach then
    factor = TimerHook.table[unit]
    if factor == nil then
      error("TimerHook.print_report: unit must be 'auto', 'auto_foreach', 'sec', 'ms', 'us' or 'ns' (got "
        .. tostring(unit) .. ')', 2)
    end
  end
  local rows = { { 'LinkName', 'ElapsedTime', 'Occurrence' } }
  for _, name in ipairs(s.names) do
    local r = s[name]
    if auto_foreach then factor, unit = choose_unit(r.elapsed_time) end
    rows[#rows + 1] = { name, string.format('%3.2f%s', r.elapsed_time * factor, unit), tostring(r.occurrence) }
  end
  local widths = { 0, 0, 0 }
  for _, row in ipairs(rows) do
    for i = 1, 3 do widths[i] = math.max(widths[i], #row[i]) end
  end
  local fmt = string.format('%%%ds  %%%ds  %%%ds', widths[1], widths[2], widths[3])
  local lines = {}
  for i, row in ipairs(rows) do lines[i] = string.format(fmt, row[1], row[2], row[3]) end
  local text = table.concat(lines, '\n') .. '\n'
  if file ~= false then
    local f = file or io.stdout
    f:write(text)
    f:flush()
  end
  return text
end

return TimerHook

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
local report = require 'chainer._timer_report'

local TimerHook = LinkHook:extend('TimerHook')
TimerHook.name = 'TimerHook'
TimerHook.table = report.UNITS

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

function TimerHook:summary() return report.summary(self.call_history) end

-- print_report([unit], [file]): Chainer's table, one row per link name (see
-- _timer_report.lua); returns the text.
function TimerHook:print_report(unit, file)
  return report.print(self:summary(), 'LinkName', unit, file, 'TimerHook.print_report')
end

return TimerHook

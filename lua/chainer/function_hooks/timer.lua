-- function_hooks/timer.lua: TimerHook, the wall time of every forward and
-- backward call of each function.
--
--   local hook = chainer.function_hooks.TimerHook()
--   hook:scope(function() model(x) end)
--   print(hook:total_time())      -- seconds
--   hook:print_report()           -- a table by function name
--
-- call_history holds {function, seconds} pairs in call order.
local FunctionHook = require('chainer.function_hook').FunctionHook

local now = require('chainer._libc').monotonic
local report = require 'chainer._timer_report'

local TimerHook = FunctionHook:extend('TimerHook')
TimerHook.name = 'TimerHook'
TimerHook.now = now
TimerHook.table = report.UNITS

function TimerHook:init()
  self.call_history = {}
  self._starts = {}
end

local function push(self) self._starts[#self._starts + 1] = now() end
local function pop(self, func)
  local s = self._starts
  local t0 = s[#s]
  s[#s] = nil
  local h = self.call_history
  h[#h + 1] = { func, now() - t0 }
end

function TimerHook:forward_preprocess(func) push(self) end
function TimerHook:forward_postprocess(func) pop(self, func) end
function TimerHook:backward_preprocess(func) push(self) end
function TimerHook:backward_postprocess(func) pop(self, func) end

-- Total seconds spent in the recorded calls.
function TimerHook:total_time()
  local s = 0
  for _, e in ipairs(self.call_history) do s = s + e[2] end
  return s
end

-- { names = {labels in first-seen order}, [label] = {elapsed_time = seconds, occurrence = n} }
function TimerHook:summary()
  local by_label = {}
  for i, e in ipairs(self.call_history) do by_label[i] = { e[1]:label(), e[2] } end
  return report.summary(by_label)
end

-- print_report([unit], [file]): Chainer's table, one row per function label
-- (unit 'auto', 'auto_foreach', 'sec', 'ms', 'us' or 'ns'; file false only
-- returns the text; see _timer_report.lua).  Returns the text.
function TimerHook:print_report(unit, file)
  return report.print(self:summary(), 'FunctionName', unit, file, 'TimerHook.print_report')
end

return TimerHook

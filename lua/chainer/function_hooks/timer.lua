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

local TimerHook = FunctionHook:extend('TimerHook')
TimerHook.name = 'TimerHook'
TimerHook.now = now

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

-- { [label] = {elapsed_time = seconds, occurrence = count} }, plus the
-- labels in first-seen order as `names`.
function TimerHook:summary()
  local out, names = {}, {}
  for _, e in ipairs(self.call_history) do
    local label = e[1]:label()
    local r = out[label]
    if not r then
      r = { elapsed_time = 0, occurrence = 0 }
      out[label] = r
      names[#names + 1] = label
    end
    r.elapsed_time = r.elapsed_time + e[2]
    r.occurrence = r.occurrence + 1
  end
  out.names = names
  return out
end

local function humanize(sec, unit)
  if unit == 'sec' then return string.format('%.2fsec', sec) end
  if unit == 'ms' then return string.format('%.2fms', sec * 1e3) end
  if unit == 'us' then return string.format('%.2fus', sec * 1e6) end
  if sec >= 1 then return string.format('%.2fsec', sec) end
  if sec >= 1e-3 then return string.format('%.2fms', sec * 1e3) end
  return string.format('%.2fus', sec * 1e6)
end

-- Prints (and returns) the report: one row per function label with the
-- total time and the number of calls.  unit: 'auto' (default), 'sec', 'ms', 'us'.
function TimerHook:print_report(unit, file)
  local s = self:summary()
  local lines = { string.format('%-22s %12s %12s', 'FunctionName', 'ElapsedTime', 'Occurrence') }
  for _, name in ipairs(s.names) do
    local r = s[name]
    lines[#lines + 1] = string.format('%-22s %12s %12d', name, humanize(r.elapsed_time, unit), r.occurrence)
  end
  local text = table.concat(lines, '\n') .. '\n'
  if file ~= false then (file or io.stdout):write(text) end
  return text
end

return TimerHook

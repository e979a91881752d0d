-- chainer.training.triggers: IntervalTrigger, ManualScheduleTrigger,
-- MaxValueTrigger, MinValueTrigger, BestValueTrigger, EarlyStoppingTrigger,
-- TimeTrigger, OnceTrigger and get_trigger.
local M = {}

M.IntervalTrigger = require 'chainer.training.triggers.interval'
M.ManualScheduleTrigger = require 'chainer.training.triggers.manual_schedule'
local mm = require 'chainer.training.triggers.minmax_value'
M.BestValueTrigger = mm.BestValueTrigger
M.MaxValueTrigger = mm.MaxValueTrigger
M.MinValueTrigger = mm.MinValueTrigger
M.EarlyStoppingTrigger = require 'chainer.training.triggers.early_stopping'
M.TimeTrigger = require 'chainer.training.triggers.time'
M.OnceTrigger = require 'chainer.training.triggers.once'

local function never() return false end

-- True for a {period, unit} table such as {20, 'epoch'}.
local function is_interval_spec(t)
  return type(t) == 'table' and getmetatable(t) == nil and type(t[1]) == 'number' and type(t[2]) == 'string'
end
M.is_interval_spec = is_interval_spec

-- get_trigger(trigger): a callable (function or object with __call) is
-- returned as is, {period, unit} becomes an IntervalTrigger, nil a trigger
-- that never fires.
function M.get_trigger(trigger)
  if trigger == nil then return never end
  if type(trigger) == 'function' then return trigger end
  if is_interval_spec(trigger) then return M.IntervalTrigger(trigger[1], trigger[2]) end
  if type(trigger) == 'table' then
    local mt = getmetatable(trigger)
    if mt and mt.__call then return trigger end
  end
  error("get_trigger: a trigger is a function(trainer), a trigger object or {period, 'epoch'|'iteration'} (got "
    .. type(trigger) .. ')', 2)
end

return M

-- _shift.lua: the shared parts of the hyperparameter schedules
-- (ExponentialShift, StepShift, ...): finding the optimizer, setting the
-- attribute, and serializing _t and _last_value.
local util = require 'chainer.training._util'

local M = {}

function M.get_optimizer(self, trainer)
  return self._optimizer or trainer.updater:get_optimizer('main')
end

function M.update_value(self, optimizer, value)
  optimizer[self._attr] = value
  self._last_value = value
end

-- initialize for the schedules that start at _init (or resume at _last_value).
function M.initialize(self, trainer)
  local optimizer = M.get_optimizer(self, trainer)
  if self._init == nil then self._init = optimizer[self._attr] end
  if self._last_value ~= nil then
    M.update_value(self, optimizer, self._last_value)
  else
    M.update_value(self, optimizer, self._init)
  end
end

function M.serialize(self, serializer)
  self._t = util.ser_number(serializer, '_t', self._t)
  local loading = util.is_loading(serializer)
  if loading then
    -- Chainer writes None before the first shift; chainlua writes nothing
    local v, found = util.optional(serializer, '_last_value', self._last_value)
    if found and v ~= nil then self._last_value = util.to_number(v) end
  elseif self._last_value ~= nil then
    serializer('_last_value', self._last_value)
  end
end

-- Clamps `value` at `target` in the direction the schedule moves.
function M.clamp(value, target, increasing)
  if target == nil then return value end
  if increasing then
    if value / target > 1 then return target end
  else
    if value / target < 1 then return target end
  end
  return value
end

function M.check_attr(attr, who)
  if type(attr) ~= 'string' then
    error(who .. ": attr must be the name of an optimizer hyperparameter such as 'lr' (got " .. type(attr) .. ')', 4)
  end
end

return M

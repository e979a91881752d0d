-- ManualScheduleTrigger(points, unit): fires when the iteration (or
-- epoch_detail) passes one of the given points.  `finished` becomes true
-- after the last point.
local class = require 'chainer.class'
local util = require 'chainer.training._util'

local ManualScheduleTrigger = class.Object:extend('ManualScheduleTrigger')

function ManualScheduleTrigger:init(points, unit)
  if unit ~= 'epoch' and unit ~= 'iteration' then
    error("ManualScheduleTrigger: unit must be 'epoch' or 'iteration' (got " .. tostring(unit) .. ')', 3)
  end
  if type(points) == 'number' then points = { points } end
  if type(points) ~= 'table' or #points == 0 then
    error('ManualScheduleTrigger: points must be a number or a non-empty list of numbers', 3)
  end
  self.points = points
  self.unit = unit
  self._max = math.max(unpack(points))
  self._previous_iteration = 0
  self._previous_epoch_detail = 0
  self.finished = false
end

ManualScheduleTrigger.__call = function(self, trainer)
  local updater = trainer.updater
  local fire = false
  if self.unit == 'epoch' then
    local ed = updater.epoch_detail
    local prev = self._previous_epoch_detail
    if prev < 0 then prev = updater.previous_epoch_detail or 0 end
    for _, p in ipairs(self.points) do
      if prev < p and p <= ed then fire = true break end
    end
    if fire and ed >= self._max then self.finished = true end
  else
    local it = updater.iteration
    local prev = self._previous_iteration
    if prev < 0 then prev = it - 1 end
    for _, p in ipairs(self.points) do
      if prev < p and p <= it then fire = true break end
    end
    if fire and it >= self._max then self.finished = true end
  end
  util.remember_previous(self, updater)
  return fire
end

function ManualScheduleTrigger:get_training_length()
  return self._max, self.unit
end

function ManualScheduleTrigger:serialize(serializer)
  util.serialize_previous(self, serializer)
  self.finished = util.ser_bool(serializer, 'finished', self.finished)
end

return ManualScheduleTrigger

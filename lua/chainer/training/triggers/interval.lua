-- IntervalTrigger(period, unit): fires every `period` iterations or epochs.
--
-- 'iteration': fires when floor(prev_iteration / period) ~= floor(iteration / period);
-- 'epoch':     the same on epoch_detail, so fractional periods work.
-- It remembers the values of its previous call, so it must be called at
-- every iteration (the Trainer does).
local class = require 'chainer.class'
local util = require 'chainer.training._util'

local floor = math.floor

local IntervalTrigger = class.Object:extend('IntervalTrigger')

function IntervalTrigger:init(period, unit)
  if unit ~= 'epoch' and unit ~= 'iteration' then
    error("IntervalTrigger: unit must be 'epoch' or 'iteration' (got " .. tostring(unit) .. ')', 3)
  end
  if type(period) ~= 'number' or period <= 0 then
    error('IntervalTrigger: period must be a positive number (got ' .. tostring(period) .. ')', 3)
  end
  self.period = period
  self.unit = unit
  self._previous_iteration = 0
  self._previous_epoch_detail = 0
  self.count = 0
end

IntervalTrigger.__call = function(self, trainer)
  local updater = trainer.updater
  local fire
  local period = self.period
  if self.unit == 'epoch' then
    local ed = updater.epoch_detail
    local prev = self._previous_epoch_detail
    if prev < 0 then prev = updater.previous_epoch_detail or 0 end
    self.count = floor(ed / period)
    fire = floor(prev / period) ~= floor(ed / period)
  else
    local it = updater.iteration
    local prev = self._previous_iteration
    if prev < 0 then prev = it - 1 end
    fire = floor(prev / period) ~= floor(it / period)
  end
  util.remember_previous(self, updater)
  return fire
end

function IntervalTrigger:get_training_length()
  return self.period, self.unit
end

function IntervalTrigger:serialize(serializer)
  util.serialize_previous(self, serializer)
end

IntervalTrigger.__tostring = function(self)
  return string.format("IntervalTrigger(%s, '%s')", util.fmt_g(self.period), self.unit)
end

return IntervalTrigger

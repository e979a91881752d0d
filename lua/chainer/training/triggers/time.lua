-- TimeTrigger(period): fires once every `period` seconds of training time
-- (trainer.elapsed_time).
local class = require 'chainer.class'
local util = require 'chainer.training._util'

local TimeTrigger = class.Object:extend('TimeTrigger')

function TimeTrigger:init(period)
  if type(period) ~= 'number' or period <= 0 then
    error('TimeTrigger: period must be a positive number of seconds (got ' .. tostring(period) .. ')', 3)
  end
  self._period = period
  self._next_time = period
end

TimeTrigger.__call = function(self, trainer)
  if self._next_time < trainer.elapsed_time then
    self._next_time = self._next_time + self._period
    return true
  end
  return false
end

function TimeTrigger:serialize(serializer)
  self._next_time = util.ser_number(serializer, 'next_time', self._next_time)
end

return TimeTrigger

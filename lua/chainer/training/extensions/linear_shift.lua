-- LinearShift(attr, value_range, time_range, {optimizer =}): holds
-- value_range[1] until time_range[1] calls, then moves linearly to
-- value_range[2] at time_range[2] calls and stays there.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local shift = require 'chainer.training.extensions._shift'

local LinearShift = extension.Extension:extend('LinearShift')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'optimizer' })

function LinearShift:init(attr, value_range, time_range, ...)
  local opts = args.parse_at(3, 'LinearShift', SIGNATURE, select('#', ...), ...)
  shift.check_attr(attr, 'LinearShift')
  if type(value_range) ~= 'table' or #value_range ~= 2 or type(time_range) ~= 'table' or #time_range ~= 2 then
    error('LinearShift: value_range and time_range must be pairs {v1, v2} and {t1, t2}', 3)
  end
  self._attr, self._value_range, self._time_range = attr, value_range, time_range
  self._optimizer = opts.optimizer
  self._t = 0
  self._last_value = nil
end

function LinearShift:_compute_next_value()
  local t1, t2 = self._time_range[1], self._time_range[2]
  local v1, v2 = self._value_range[1], self._value_range[2]
  if self._t <= t1 then return v1 end
  if self._t >= t2 then return v2 end
  local rate = (self._t - t1) / (t2 - t1)
  return v1 + rate * (v2 - v1)
end

function LinearShift:initialize(trainer)
  local opt = shift.get_optimizer(self, trainer)
  local value = self._last_value
  if value == nil then value = self:_compute_next_value() end
  shift.update_value(self, opt, value)
end

LinearShift.serialize = shift.serialize

LinearShift.__call = function(self, trainer)
  self._t = self._t + 1
  shift.update_value(self, shift.get_optimizer(self, trainer), self:_compute_next_value())
end

return LinearShift

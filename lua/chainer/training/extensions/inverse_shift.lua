-- InverseShift(attr, gamma, power, {init =, target =, optimizer =}):
-- optimizer[attr] = init * (1 + gamma * t)^(-power), t = number of calls.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local shift = require 'chainer.training.extensions._shift'

local InverseShift = extension.Extension:extend('InverseShift')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'init', 'target', 'optimizer' })

function InverseShift:init(attr, gamma, power, ...)
  local opts = args.parse_at(3, 'InverseShift', SIGNATURE, select('#', ...), ...)
  shift.check_attr(attr, 'InverseShift')
  if type(gamma) ~= 'number' or gamma < 0 then
    error('InverseShift: gamma must be a non-negative number (got ' .. tostring(gamma) .. ')', 3)
  end
  self._attr, self._gamma, self._power = attr, gamma, power
  self._init, self._target, self._optimizer = opts.init, opts.target, opts.optimizer
  self._t = 0
  self._last_value = nil
end

InverseShift.initialize = shift.initialize
InverseShift.serialize = shift.serialize

InverseShift.__call = function(self, trainer)
  self._t = self._t + 1
  local opt = shift.get_optimizer(self, trainer)
  local value = self._init * (1 + self._gamma * self._t) ^ (-self._power)
  value = shift.clamp(value, self._target, self._power < 0)
  shift.update_value(self, opt, value)
end

return InverseShift

-- StepShift(attr, gamma, step, {init =, target =, optimizer =}):
-- optimizer[attr] = init * gamma^floor(t / step), t = number of calls.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local shift = require 'chainer.training.extensions._shift'

local StepShift = extension.Extension:extend('StepShift')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'init', 'target', 'optimizer' })

function StepShift:init(attr, gamma, step, ...)
  local opts = args.parse_at(3, 'StepShift', SIGNATURE, select('#', ...), ...)
  shift.check_attr(attr, 'StepShift')
  if type(step) ~= 'number' or step <= 0 then
    error('StepShift: step must be a positive number (got ' .. tostring(step) .. ')', 3)
  end
  self._attr, self._gamma, self._step = attr, gamma, step
  self._init, self._target, self._optimizer = opts.init, opts.target, opts.optimizer
  self._t = 0
  self._last_value = nil
end

StepShift.initialize = shift.initialize
StepShift.serialize = shift.serialize

StepShift.__call = function(self, trainer)
  self._t = self._t + 1
  local opt = shift.get_optimizer(self, trainer)
  local value = self._init * self._gamma ^ math.floor(self._t / self._step)
  value = shift.clamp(value, self._target, self._gamma > 1)
  shift.update_value(self, opt, value)
end

return StepShift

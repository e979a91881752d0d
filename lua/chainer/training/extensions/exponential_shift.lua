-- ExponentialShift(attr, rate, {init =, target =, optimizer =}): at each
-- call, optimizer[attr] = init * rate^t (t = number of calls), stopping at
-- `target` when given.  Used as trainer:extend(ExponentialShift('lr', 0.5),
-- {trigger = {10, 'epoch'}}).
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local shift = require 'chainer.training.extensions._shift'

local ExponentialShift = extension.Extension:extend('ExponentialShift')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'init', 'target', 'optimizer' })

function ExponentialShift:init(attr, rate, ...)
  local opts = args.parse_at(3, 'ExponentialShift', SIGNATURE, select('#', ...), ...)
  shift.check_attr(attr, 'ExponentialShift')
  if type(rate) ~= 'number' or rate < 0 then
    error('ExponentialShift: rate must be a non-negative number (got ' .. tostring(rate) .. ')', 3)
  end
  self._attr, self._rate = attr, rate
  self._init, self._target, self._optimizer = opts.init, opts.target, opts.optimizer
  self._t = 0
  self._last_value = nil
end

ExponentialShift.initialize = shift.initialize
ExponentialShift.serialize = shift.serialize

ExponentialShift.__call = function(self, trainer)
  self._t = self._t + 1
  local opt = shift.get_optimizer(self, trainer)
  local value = self._init * self._rate ^ self._t
  value = shift.clamp(value, self._target, self._rate > 1)
  shift.update_value(self, opt, value)
end

return ExponentialShift

-- MultistepShift(attr, gamma, step_value, init, {optimizer =}):
-- optimizer[attr] = init * gamma^k where k is the number of entries of
-- step_value (call counts) already reached.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local shift = require 'chainer.training.extensions._shift'
local util = require 'chainer.training._util'

local MultistepShift = extension.Extension:extend('MultistepShift')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'optimizer' })

function MultistepShift:init(attr, gamma, step_value, init, ...)
  local opts = args.parse_at(3, 'MultistepShift', SIGNATURE, select('#', ...), ...)
  shift.check_attr(attr, 'MultistepShift')
  if type(step_value) ~= 'table' then
    error('MultistepShift: step_value must be a list of call counts such as {100, 200}', 3)
  end
  self._attr, self._gamma, self._step_value, self._init = attr, gamma, step_value, init
  self._optimizer = opts.optimizer
  self._t = 0
  self._current_step = 0
end

function MultistepShift:initialize(trainer)
  local opt = shift.get_optimizer(self, trainer)
  if self._init == nil then self._init = opt[self._attr] else opt[self._attr] = self._init end
end

MultistepShift.__call = function(self, trainer)
  self._t = self._t + 1
  local opt = shift.get_optimizer(self, trainer)
  local sv = self._step_value
  if self._current_step < #sv and self._t >= sv[self._current_step + 1] then
    self._current_step = self._current_step + 1
  end
  opt[self._attr] = self._init * self._gamma ^ self._current_step
end

function MultistepShift:serialize(serializer)
  self._t = util.ser_number(serializer, '_t', self._t)
  self._current_step = util.ser_number(serializer, '_current_step', self._current_step)
end

return MultistepShift

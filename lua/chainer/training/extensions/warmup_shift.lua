-- WarmupShift(attr, warmup_start, warmup_iter, {init =, optimizer =}):
-- moves optimizer[attr] linearly from warmup_start to init over the first
-- warmup_iter calls, then keeps init.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local shift = require 'chainer.training.extensions._shift'

local WarmupShift = extension.Extension:extend('WarmupShift')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'init', 'optimizer' })

function WarmupShift:init(attr, warmup_start, warmup_iter, ...)
  local opts = args.parse_at(3, 'WarmupShift', SIGNATURE, select('#', ...), ...)
  shift.check_attr(attr, 'WarmupShift')
  if type(warmup_iter) ~= 'number' or warmup_iter <= 0 then
    error('WarmupShift: warmup_iter must be a positive number (got ' .. tostring(warmup_iter) .. ')', 3)
  end
  self._attr, self._warmup_start, self._warmup_iter = attr, warmup_start, warmup_iter
  self._init, self._optimizer = opts.init, opts.optimizer
  self._t = 0
  self._last_value = nil
end

function WarmupShift:initialize(trainer)
  local opt = shift.get_optimizer(self, trainer)
  if self._init == nil then self._init = opt[self._attr] end
  shift.update_value(self, opt, self._last_value or self._warmup_start)
end

WarmupShift.serialize = shift.serialize

WarmupShift.__call = function(self, trainer)
  self._t = self._t + 1
  local opt = shift.get_optimizer(self, trainer)
  local value
  if self._t < self._warmup_iter then
    value = self._warmup_start + (self._init - self._warmup_start) * self._t / self._warmup_iter
  else
    value = self._init
  end
  shift.update_value(self, opt, value)
end

return WarmupShift

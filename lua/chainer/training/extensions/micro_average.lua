-- MicroAverage(numerator_key, denominator_key, result_key, {trigger =
-- {1, 'epoch'}}): reports sum(numerator) / sum(denominator) over the
-- trigger's period (a micro average, e.g. accuracy over all examples
-- rather than the mean of per-batch accuracies).
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local reporter_mod = require 'chainer.reporter'
local util = require 'chainer.training._util'

local MicroAverage = extension.Extension:extend('MicroAverage')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'trigger' })
MicroAverage.priority = extension.PRIORITY_EDITOR

function MicroAverage:init(numerator_key, denominator_key, result_key, ...)
  local opts = args.parse_at(3, 'MicroAverage', SIGNATURE, select('#', ...), ...)
  self._numerator_key = numerator_key
  self._denominator_key = denominator_key
  self._result_key = result_key
  self._trigger = require('chainer.training.triggers').get_trigger(opts.trigger or { 1, 'epoch' })
  self._numerator = 0
  self._denominator = 0
end

MicroAverage.__call = function(self, trainer)
  local obs = trainer.observation
  local num, den = obs[self._numerator_key], obs[self._denominator_key]
  if num == nil or den == nil then return end
  self._numerator = self._numerator + util.to_number(num)
  self._denominator = self._denominator + util.to_number(den)
  if self._trigger(trainer) then
    local result = self._numerator / self._denominator
    self._numerator, self._denominator = 0, 0
    reporter_mod.report({ [self._result_key] = result })
  end
end

function MicroAverage:serialize(serializer)
  self._numerator = util.ser_number(serializer, '_numerator', self._numerator)
  self._denominator = util.ser_number(serializer, '_denominator', self._denominator)
end

return MicroAverage

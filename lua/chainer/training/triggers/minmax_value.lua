-- BestValueTrigger(key, compare, trigger) and its two forms
-- MaxValueTrigger(key, trigger) / MinValueTrigger(key, trigger): at each
-- firing of the interval trigger, compares the mean of observation[key]
-- since the last firing with the best so far, and fires when it improves.
local class = require 'chainer.class'
local reporter = require 'chainer.reporter'
local util = require 'chainer.training._util'

local M = {}

local function get_trigger(t) return require('chainer.training.triggers').get_trigger(t) end

local BestValueTrigger = class.Object:extend('BestValueTrigger')
M.BestValueTrigger = BestValueTrigger

function BestValueTrigger:init(key, compare, trigger)
  if type(key) ~= 'string' then
    error('BestValueTrigger: key must be a string (got ' .. type(key) .. ')', 3)
  end
  self._key = key
  self._compare = compare
  self._best_value = nil
  self._interval_trigger = get_trigger(trigger or { 1, 'epoch' })
  self._summary = reporter.DictSummary()
end

BestValueTrigger.__call = function(self, trainer)
  local obs = trainer.observation
  local key = self._key
  local v = obs[key]
  if v ~= nil then self._summary:add({ [key] = v }) end
  if not self._interval_trigger(trainer) then return false end
  local stats = self._summary:compute_mean()
  local value = stats[key]
  self._summary = reporter.DictSummary()
  if value == nil then return false end
  if self._best_value == nil or self._compare(self._best_value, value) then
    self._best_value = value
    return true
  end
  return false
end

function BestValueTrigger:serialize(serializer)
  if self._interval_trigger.serialize then
    self._interval_trigger:serialize(util.child(serializer, 'interval_trigger'))
  end
  self._summary:serialize(util.child(serializer, 'summary'))
  local loading = util.is_loading(serializer)
  if loading or self._best_value ~= nil then
    local b = serializer('best_value', self._best_value)
    if loading then self._best_value = util.to_number(b) end
  end
end

local MaxValueTrigger = BestValueTrigger:extend('MaxValueTrigger')
M.MaxValueTrigger = MaxValueTrigger
function MaxValueTrigger:init(key, trigger)
  BestValueTrigger.init(self, key, function(best, new) return new > best end, trigger)
end

local MinValueTrigger = BestValueTrigger:extend('MinValueTrigger')
M.MinValueTrigger = MinValueTrigger
function MinValueTrigger:init(key, trigger)
  BestValueTrigger.init(self, key, function(best, new) return new < best end, trigger)
end

return M

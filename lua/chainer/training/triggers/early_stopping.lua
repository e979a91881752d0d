-- EarlyStoppingTrigger{check_trigger =, monitor =, patience =, mode =,
-- verbose =, max_trigger =}: a stop trigger that fires when the monitored
-- value has not improved for `patience` checks, or when max_trigger fires.
local args = require 'chainer._args'
local class = require 'chainer.class'
local reporter = require 'chainer.reporter'
local util = require 'chainer.training._util'

local function get_trigger(t) return require('chainer.training.triggers').get_trigger(t) end

local EarlyStoppingTrigger = class.Object:extend('EarlyStoppingTrigger')

-- Chainer's (check_trigger, monitor, patience, mode, verbose, max_trigger);
-- patients is its deprecated spelling of patience.
local SIGNATURE = args.signature({ 'check_trigger', 'monitor', 'patience', 'mode', 'verbose', 'max_trigger' },
  { 'patients' })

function EarlyStoppingTrigger:init(...)
  local opts = args.parse_at(3, 'EarlyStoppingTrigger', SIGNATURE, select('#', ...), ...)
  self.monitor = opts.monitor or 'main/loss'
  self.patience = opts.patience or opts.patients or 3
  self.verbose = opts.verbose or false
  self.count = 0
  local mode = opts.mode or 'auto'
  if mode == 'auto' then
    mode = self.monitor:find('acc', 1, true) and 'max' or 'min'
  end
  if mode == 'max' then
    self._compare = function(a, b) return a > b end
    self.best = -math.huge
  elseif mode == 'min' then
    self._compare = function(a, b) return a < b end
    self.best = math.huge
  else
    error("EarlyStoppingTrigger: mode must be 'auto', 'max' or 'min' (got " .. tostring(mode) .. ')', 3)
  end
  self._max_trigger = get_trigger(opts.max_trigger or { 100, 'epoch' })
  self._interval_trigger = get_trigger(opts.check_trigger or { 1, 'epoch' })
  self._summary = reporter.DictSummary()
end

EarlyStoppingTrigger.__call = function(self, trainer)
  local obs = trainer.observation
  local v = obs[self.monitor]
  if v ~= nil then self._summary:add({ [self.monitor] = v }) end
  if self._max_trigger(trainer) then return true end
  if not self._interval_trigger(trainer) then return false end
  if v == nil then
    io.stderr:write(string.format('EarlyStoppingTrigger: %s is not in observation\n', self.monitor))
    return false
  end
  local current = self._summary:compute_mean()[self.monitor]
  self._summary = reporter.DictSummary()
  if self._compare(current, self.best) then
    self.best = current
    self.count = 0
  else
    self.count = self.count + 1
  end
  if self.count >= self.patience then
    if self.verbose then print(string.format('Epoch %d: early stopping', trainer.updater.epoch)) end
    return true
  end
  return false
end

function EarlyStoppingTrigger:get_training_length()
  return self._max_trigger:get_training_length()
end

-- Chainer 7.8.1's EarlyStoppingTrigger saves nothing: all of this state is
-- chainlua's and may be absent (a stop trigger in a Chainer snapshot).
function EarlyStoppingTrigger:serialize(serializer)
  local sub = function(name) return util.optional_child(serializer, name) end
  if self._max_trigger.serialize then self._max_trigger:serialize(sub('max_trigger')) end
  if self._interval_trigger.serialize then self._interval_trigger:serialize(sub('interval_trigger')) end
  self._summary:serialize(sub('summary'))
  local best, has_best = util.optional(serializer, 'best', self.best)
  if has_best then self.best = util.to_number(best) or self.best end
  local count, has_count = util.optional(serializer, 'count', self.count)
  if has_count then self.count = util.to_number(count) or self.count end
end

return EarlyStoppingTrigger

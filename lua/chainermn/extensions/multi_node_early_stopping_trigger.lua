-- chainermn/extensions/multi_node_early_stopping_trigger.lua:
-- chainermn.extensions.MultiNodeEarlyStoppingTrigger(comm, {check_trigger =
-- {1, 'epoch'}, monitor = 'main/loss', patience = 3, mode = 'auto', verbose =
-- false, max_trigger = {100, 'epoch'}, suffix = '_aggregated'}), as ChainerMN's.
--
-- EarlyStoppingTrigger on the mean over every rank of the monitored value:
-- at each check an ObservationAggregator averages what every rank observed
-- since the last check (stored as monitor .. suffix), so all ranks decide
-- alike and stop at the same iteration.  A collective: every rank's trainer
-- uses it as its stop trigger.
local args = require 'chainer._args'
local class = require 'chainer.class'
local EarlyStoppingTrigger = require 'chainer.training.triggers.early_stopping'
local ObservationAggregator = require('chainermn.extensions.observation_aggregator').ObservationAggregator

local Trigger = class.Object:extend('MultiNodeEarlyStoppingTrigger')

local NAME = 'MultiNodeEarlyStoppingTrigger'
local OPTIONS = args.accept { 'check_trigger', 'monitor', 'patience', 'patients', 'mode', 'verbose', 'max_trigger',
  'suffix' }

function Trigger:init(comm, opts)
  if type(comm) ~= 'table' or type(comm.gather_obj) ~= 'function' then
    error(NAME .. ': comm must be a chainermn communicator (got ' .. type(comm) .. ')', 3)
  end
  opts = args.options(NAME, opts, OPTIONS, 3)
  local monitor, suffix = opts.monitor or 'main/loss', opts.suffix or '_aggregated'
  if type(monitor) ~= 'string' or type(suffix) ~= 'string' then
    error(NAME .. ': monitor and suffix must be strings', 3)
  end
  local check_trigger = opts.check_trigger or { 1, 'epoch' }
  local aggregated = monitor .. suffix
  local ok, trigger = pcall(EarlyStoppingTrigger, { check_trigger = check_trigger, monitor = aggregated,
    patience = opts.patience, patients = opts.patients, mode = opts.mode, verbose = opts.verbose,
    max_trigger = opts.max_trigger })
  if not ok then error(tostring(trigger):gsub('EarlyStoppingTrigger', NAME), 3) end
  self.actual_trigger = trigger
  self.aggregator = ObservationAggregator(comm, monitor, aggregated, { comm_trigger = check_trigger })
end

Trigger.__call = function(self, trainer)
  self.aggregator(trainer)
  return self.actual_trigger(trainer)
end

function Trigger:get_training_length() return self.actual_trigger:get_training_length() end

function Trigger:serialize(serializer) self.actual_trigger:serialize(serializer) end

return { MultiNodeEarlyStoppingTrigger = Trigger }

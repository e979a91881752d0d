-- chainermn/extensions/observation_aggregator.lua:
-- chainermn.extensions.ObservationAggregator(comm, original_key,
-- aggregated_key, {comm_trigger = {1, 'iteration'}, aggregator =}), as
-- ChainerMN's.
--
-- An extension (every iteration, before the reporting extensions) that
-- keeps this rank's observations of original_key; whenever comm_trigger
-- fires, rank 0 gathers every rank's list since the last time, applies
-- aggregator(lists) (default: the mean of all the values) and broadcasts
-- the result, which every rank stores in its observation as aggregated_key
-- (default: original_key, replacing it).  A collective: every rank's
-- trainer runs it with the same trigger.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local extension = require 'chainer.training.extension'
local values = require 'chainermn.extensions._values'

local ObservationAggregator = extension.Extension:extend('ObservationAggregator')
ObservationAggregator.trigger = { 1, 'iteration' }
ObservationAggregator.priority = extension.PRIORITY_EDITOR

local NAME = 'ObservationAggregator'
local OPTIONS = args.accept { 'comm_trigger', 'aggregator' }

-- The default aggregator: the mean of every value in every rank's list.
local function average_2d(lists)
  local total, n = nil, 0
  for _, list in ipairs(lists) do
    for _, v in ipairs(list) do
      if type(v) ~= 'number' and not T.is_tensor(v) then
        error(string.format('the observations must be numbers, tensors or Variables (got %s)', type(v)), 0)
      end
      total = total == nil and v or total + v
      n = n + 1
    end
  end
  if n == 0 then error('no rank observed a value since the last aggregation', 0) end
  return total / n
end
ObservationAggregator.average_2d = average_2d

function ObservationAggregator:init(comm, original_key, aggregated_key, opts)
  if type(comm) ~= 'table' or type(comm.gather_obj) ~= 'function' then
    error(NAME .. ': comm must be a chainermn communicator (got ' .. type(comm) .. ')', 3)
  end
  if type(original_key) ~= 'string' then
    error(NAME .. ': original_key must be a string (got ' .. type(original_key) .. ')', 3)
  end
  if aggregated_key ~= nil and type(aggregated_key) ~= 'string' then
    error(NAME .. ': aggregated_key must be a string or nil (got ' .. type(aggregated_key) .. ')', 3)
  end
  opts = args.options(NAME, opts, OPTIONS, 3)
  local aggregator = opts.aggregator
  if aggregator ~= nil and type(aggregator) ~= 'function' and
      not (type(aggregator) == 'table' and getmetatable(aggregator) and getmetatable(aggregator).__call) then
    error(NAME .. ': aggregator must be a function of the lists of observations (got ' .. type(aggregator) .. ')', 3)
  end
  self.comm = comm
  self.original_key = original_key
  self.aggregated_key = aggregated_key or original_key
  self.comm_trigger = require('chainer.training.triggers').get_trigger(opts.comm_trigger or { 1, 'iteration' })
  self.observation_history = {}
  self.aggregator = aggregator or average_2d
end

-- compute_summary(trainer): the aggregated value when comm_trigger fires
-- (the same on every rank), nil otherwise.
function ObservationAggregator:compute_summary(trainer)
  local v = trainer.observation[self.original_key]
  if v ~= nil then
    local history = self.observation_history
    history[#history + 1] = values.plain(v)
  end
  if not self.comm_trigger(trainer) then return nil end
  local comm = self.comm
  local gathered = comm:gather_obj(self.observation_history, 0)
  self.observation_history = {}
  local verdict
  if comm.rank == 0 then
    local ok, summary = pcall(self.aggregator, gathered)
    if ok and summary == nil then ok, summary = false, 'the aggregator returned nil' end
    verdict = { ok = ok, value = ok and summary or nil, problem = not ok and tostring(summary) or nil }
  end
  verdict = comm:bcast_obj(verdict, 0)
  if not verdict.ok then
    error(string.format("%s: cannot aggregate '%s' (%s)", NAME, self.original_key, verdict.problem), 3)
  end
  return verdict.value
end

ObservationAggregator.__call = function(self, trainer)
  local summary = self:compute_summary(trainer)
  if summary ~= nil then trainer.observation[self.aggregated_key] = summary end
end

return { ObservationAggregator = ObservationAggregator }

-- chainermn/extensions/generic_multi_node_evaluator.lua:
-- chainermn.extensions.GenericMultiNodeEvaluator(comm, iterator, target,
-- device, converter, root = 0, {progress_hook =}), as ChainerMN's.
--
-- For evaluations that are not a mean over ranks (a dataset that does not
-- split evenly, a metric over every example): each rank runs calc_local on
-- the batches of its own non-repeating iterator, the root gathers every
-- result, and aggregate(results) runs once, on the root, with all of them.
-- Subclass it and override calc_local(...) (default: target(...)) and
-- aggregate(results) (default: returns the results):
--
--   local MyEval = chainermn.extensions.GenericMultiNodeEvaluator:extend('MyEval')
--   function MyEval:calc_local(x, t) return F.sum(F.accuracy(self:get_target()(x), t)) end
--   function MyEval:aggregate(results) ... chainer.reporter.report{...} ... end
--
-- Calling it (a collective) returns aggregate's result on the root and nil
-- elsewhere.  The ranks exchange results in rounds of 8 batches and stop
-- after a round in which no rank had a batch left; results travel with
-- gather_obj (Variables as their arrays).  An error in one rank's
-- calc_local is an error on every rank at the end of its round.
local args = require 'chainer._args'
local cfg = require 'chainer.config'
local extension = require 'chainer.training.extension'
local values = require 'chainermn.extensions._values'

local Evaluator = extension.Extension:extend('GenericMultiNodeEvaluator')
Evaluator.trigger = { 1, 'epoch' }
Evaluator.default_name = 'validation'
Evaluator.priority = extension.PRIORITY_WRITER

local NAME = 'GenericMultiNodeEvaluator'
local SIGNATURE = args.signature { 'device', 'converter', 'root', 'progress_hook' }
local GATHER_INTERVAL = 8

local function callable(f)
  return type(f) == 'function' or (type(f) == 'table' and getmetatable(f) ~= nil and getmetatable(f).__call ~= nil)
end

function Evaluator:init(comm, iterator, target, ...)
  if type(comm) ~= 'table' or type(comm.gather_obj) ~= 'function' then
    error(NAME .. ': comm must be a chainermn communicator (got ' .. type(comm) .. ')', 3)
  end
  if type(iterator) ~= 'table' or type(iterator.next) ~= 'function' then
    error(NAME .. ': iterator must be a chainer iterator (got ' .. type(iterator) .. ')', 3)
  end
  if iterator['repeat'] == true then
    error(NAME .. ': iterator must not repeat (create it with {loop = false}): the evaluation would never end', 3)
  end
  if not callable(target) then error(NAME .. ': target must be callable (got ' .. type(target) .. ')', 3) end
  local a = args.parse_at(3, NAME, SIGNATURE, select('#', ...), ...)
  local root = a.root or 0
  if type(root) ~= 'number' or root ~= math.floor(root) or root < 0 or root >= comm.size then
    error(string.format('%s: root must be a rank in 0..%d (got %s)', NAME, comm.size - 1, tostring(root)), 3)
  end
  if a.converter ~= nil and not callable(a.converter) then
    error(NAME .. ': converter must be callable (got ' .. type(a.converter) .. ')', 3)
  end
  if a.progress_hook ~= nil and not callable(a.progress_hook) then
    error(NAME .. ': progress_hook must be callable (got ' .. type(a.progress_hook) .. ')', 3)
  end
  self.comm, self.iterator, self.root = comm, iterator, root
  self._targets = { main = target }
  self.converter = a.converter or function(batch, device) return require('chainer.dataset').concat_examples(batch,
    device) end
  self.device = a.device
  self._progress_hook = a.progress_hook
end

function Evaluator:get_target(name) return self._targets[name or 'main'] end

-- calc_local(...): this rank's result for one batch (the converter's
-- arrays as arguments); must not be nil.
function Evaluator:calc_local(...)
  return self._targets.main(...)
end

-- aggregate(results): runs once, on the root, with every rank's results.
function Evaluator:aggregate(results)
  return results
end

-- This rank's result for its next batch: nil when its iterator has ended,
-- {error = message} when calc_local failed or gave nil.
function Evaluator:_next_result()
  local batch = self.iterator:next()
  if batch == nil then return nil end
  local ok, result = pcall(function()
    local in_arrays = self.converter(batch, self.device)
    local out
    cfg.no_backprop_mode(function()
      if type(in_arrays) == 'table' and not in_arrays._is_variable and in_arrays[1] ~= nil then
        out = self:calc_local(unpack(in_arrays, 1, #in_arrays))
      else
        out = self:calc_local(in_arrays)
      end
    end)
    if out == nil then error(NAME .. ': calc_local must return a value (got nil)', 0) end
    return values.plain(out)
  end)
  if not ok then return { error = tostring(result) } end
  if self.comm.rank == self.root and self._progress_hook then self._progress_hook(batch) end
  return { value = result }
end

Evaluator.__call = function(self)
  local comm, root = self.comm, self.root
  if self.iterator.reset then self.iterator:reset() end
  local results, failure, exhausted = {}, nil, false
  local all_done = false
  while not all_done do
    for _ = 1, GATHER_INTERVAL do
      local mine
      if not exhausted then
        mine = self:_next_result()
        if mine == nil or mine.error then exhausted = true end   -- a rank that failed stops evaluating
      end
      local gathered = comm:gather_obj(mine or false, root)
      if comm.rank == root then
        local any = false
        for r = 1, comm.size do
          local g = gathered[r]
          if g then
            any = true
            if g.error then
              failure = failure or string.format('%s: rank %d: %s', NAME, r - 1, g.error)
            else
              results[#results + 1] = g.value
            end
          end
        end
        all_done = not any
      end
    end
    local verdict = comm:bcast_obj(comm.rank == root and { done = all_done, failure = failure } or nil, root)
    if verdict.failure then error(verdict.failure, 2) end
    all_done = verdict.done
  end
  if comm.rank == root then return self:aggregate(results) end
  return nil
end

return { GenericMultiNodeEvaluator = Evaluator }

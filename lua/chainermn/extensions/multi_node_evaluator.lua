-- chainermn/extensions/multi_node_evaluator.lua:
-- create_multi_node_evaluator(evaluator, comm).
--
-- Each rank evaluates its own shard of the validation set (scatter_dataset);
-- the patched evaluator reports the mean over the ranks of each rank's
-- result, the same on every rank, as ChainerMN's.  With equal shards whose
-- length the batch size divides, that is the whole set's value.

local M = {}

-- A reported value as allreduce_obj can add it: numbers and tensors stay,
-- a Variable gives its array.
local function plain(v)
  if type(v) == 'table' and v._is_variable then return v.array end
  return v
end

function M.create_multi_node_evaluator(evaluator, comm)
  local fn = 'create_multi_node_evaluator'
  if type(evaluator) ~= 'table' or type(evaluator.evaluate) ~= 'function' then
    error(fn .. ': the first argument must be an evaluator (an extension with an evaluate method; got ' ..
      type(evaluator) .. ')', 2)
  end
  if type(comm) ~= 'table' or type(comm.allreduce_obj) ~= 'function' then
    error(fn .. ': the second argument must be a chainermn communicator (got ' .. type(comm) .. ')', 2)
  end
  local original = evaluator.evaluate
  evaluator._mn_communicator = comm
  -- an instance field: it shadows the class's evaluate for this evaluator only
  evaluator.evaluate = function(self)
    local local_mean = original(self)
    local values = {}
    for k, v in pairs(local_mean) do values[k] = plain(v) end
    local ok, total = pcall(comm.allreduce_obj, comm, values)
    if not ok then
      error(fn .. ': the ranks reported different things (' .. tostring(total):gsub('^allreduce_obj: ', '') .. ')', 2)
    end
    local out = {}
    for k, v in pairs(total) do out[k] = v / comm.size end   -- numbers and tensors
    return out
  end
  return evaluator
end

return M

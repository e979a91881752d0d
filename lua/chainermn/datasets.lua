-- chainermn.datasets (ChainerMN 7.8.1's): create_empty_dataset, and
-- scatter_dataset / scatter_index / DataSizeError under this name too.
local P = require 'chainer.dataset.protocol'
local scatter = require 'chainermn.scatter_dataset'

local M = {}

-- create_empty_dataset(ds): a dataset as long as ds whose examples are
-- empty tuples ({}): for the ranks of a model-parallel job that take no
-- input but must step their iterators with the others.
function M.create_empty_dataset(dataset)
  local n = P.len(dataset, 'create_empty_dataset')
  local out = {}
  for i = 1, n do out[i] = {} end
  return out
end

M.scatter_dataset = scatter.scatter_dataset
M.scatter_index = scatter.scatter_index
M.DataSizeError = require('chainermn.errors').DataSizeError

return M

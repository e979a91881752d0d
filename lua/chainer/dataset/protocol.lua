-- dataset/protocol.lua: reading any dataset the same way.
--
-- Datasets come in three shapes: dataset objects (DatasetMixin and friends,
-- with :len() and :get_example(i)), plain Lua arrays of examples, and tensors
-- (example i is row i-1).  Iterators, SubDataset and TupleDataset go through
-- these helpers so that all three work everywhere.
--
-- Batch fast path: a dataset may define ds:get_examples(indices) taking an
-- int64 tensor of 0-based positions and returning the whole batch already
-- stacked (a tensor, a Lua array of tensors or a table of tensors, as
-- concat_examples would return it), or nil when it cannot.  Iterators then
-- gather a batch with one `take` per array instead of one call per example.
-- A TabularDataset answers through its own _gather_batch, which returns
-- either the stacked arrays or nil and the batch as a Lua array of examples.
local T = require 'chainer.tensor'
local is_tensor = T.is_tensor

local P = {}

function P.len(ds, fn)
  if type(ds) == 'table' then
    local f = ds.len
    if f ~= nil then return f(ds) end
    return #ds
  elseif is_tensor(ds) then
    if ds.ptr.nd == 0 then
      error(string.format('%s: a 0-d tensor is not a dataset (expected at least 1 dimension)', fn or 'dataset'), 3)
    end
    return tonumber(ds.ptr.dim[0])
  end
  error(string.format('%s: expected a dataset (a dataset object, a Lua array or a tensor), got %s',
    fn or 'dataset', type(ds)), 3)
end

-- Example i (1-based, already in range).
function P.get(ds, i)
  if type(ds) == 'table' then
    local f = ds.get_example
    if f ~= nil then return f(ds, i) end
    return ds[i]
  end
  return ds:select(i - 1)
end

-- The stacked batch for 0-based positions `idx` (int64 tensor), or nil
-- (and, from datasets that built them anyway, the examples).
function P.gather(ds, idx)
  if is_tensor(ds) then
    if ds.ptr.dev ~= -1 then return nil end
    return require('chainer.dataset.gather').gather({ ds }, idx)[1]
  end
  if type(ds) == 'table' then
    if ds._is_tabular then return ds:_gather_batch(idx) end
    local f = ds.get_examples
    if f ~= nil then return f(ds, idx) end
  end
  return nil
end

-- Row k (0-based) of a stacked batch, shaped like one example.
function P.row(arrays, k)
  if is_tensor(arrays) then return arrays:select(k) end
  local n = #arrays
  local ex = {}
  if n > 0 then
    for j = 1, n do ex[j] = arrays[j]:select(k) end
  else
    for key, a in pairs(arrays) do ex[key] = a:select(k) end
  end
  return ex
end

-- Splits a stacked batch of n rows into a Lua array of examples.
function P.unstack(arrays, n)
  local batch = {}
  for k = 1, n do batch[k] = P.row(arrays, k - 1) end
  return batch
end

return P

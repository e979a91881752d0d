-- datasets/tuple_dataset.lua: TupleDataset(d1, d2, ...): example i is the
-- tuple {d1[i], d2[i], ...}.  Components may be tensors (example i is the
-- view d:select(i-1)), Lua arrays or dataset objects of equal length.
-- When every component is a CPU tensor, get_examples gathers a batch with
-- one `take` per component.
local DatasetMixin = require 'chainer.dataset.dataset_mixin'
local P = require 'chainer.dataset.protocol'
local T = require 'chainer.tensor'
local gather = require 'chainer.dataset.gather'

local TupleDataset = DatasetMixin:extend('TupleDataset')

function TupleDataset:init(...)
  local n = select('#', ...)
  if n == 0 then error('TupleDataset: no datasets are given', 3) end
  local ds, len = {}, nil
  local all_tensors = true
  for k = 1, n do
    local d = select(k, ...)
    if d == nil then error(string.format('TupleDataset: dataset %d is nil', k), 3) end
    local l = P.len(d, 'TupleDataset')
    if len == nil then
      len = l
    elseif l ~= len then
      error(string.format('TupleDataset: dataset %d has %d examples but dataset 1 has %d (lengths must match)',
        k, l, len), 3)
    end
    if not T.is_tensor(d) or d.ptr.dev ~= -1 then all_tensors = false end
    ds[k] = d
  end
  rawset(self, '_datasets', ds)
  rawset(self, '_n', n)
  rawset(self, '_length', len)
  rawset(self, '_all_tensors', all_tensors)
end

function TupleDataset:len() return self._length end

function TupleDataset:get_example(i)
  local ds = self._datasets
  local ex = {}
  for k = 1, self._n do ex[k] = P.get(ds[k], i) end
  return ex
end

-- The batch for 0-based positions idx (int64 tensor): a Lua array with one
-- stacked tensor per component, or nil when a component is not a CPU tensor.
function TupleDataset:get_examples(idx)
  if not self._all_tensors then return nil end
  return gather.gather(self._datasets, idx)
end

-- The component datasets (Chainer's private _datasets), as a Lua array.
function TupleDataset:datasets()
  local out = {}
  for k = 1, self._n do out[k] = self._datasets[k] end
  return out
end

return TupleDataset

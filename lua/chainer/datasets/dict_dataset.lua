-- datasets/dict_dataset.lua: DictDataset{x = xs, t = ts}: example i is the
-- table {x = xs[i], t = ts[i]}.  Like TupleDataset, CPU-tensor components
-- give a one-take-per-key batch path (get_examples).
local DatasetMixin = require 'chainer.dataset.dataset_mixin'
local P = require 'chainer.dataset.protocol'
local T = require 'chainer.tensor'
local gather = require 'chainer.dataset.gather'

local DictDataset = DatasetMixin:extend('DictDataset')

function DictDataset:init(datasets)
  if type(datasets) ~= 'table' or T.is_tensor(datasets) then
    error(string.format('DictDataset: expected a table {name = dataset, ...} (got %s)', type(datasets)), 3)
  end
  local keys = {}
  for k in pairs(datasets) do
    if type(k) ~= 'string' then
      error(string.format('DictDataset: keys must be strings (got %s %s)', type(k), tostring(k)), 3)
    end
    keys[#keys + 1] = k
  end
  if #keys == 0 then error('DictDataset: no datasets are given', 3) end
  table.sort(keys)
  local len, first, all_tensors = nil, nil, true
  local ds = {}
  for _, k in ipairs(keys) do
    local d = datasets[k]
    local l = P.len(d, 'DictDataset')
    if len == nil then
      len, first = l, k
    elseif l ~= len then
      error(string.format("DictDataset: dataset '%s' has %d examples but '%s' has %d (lengths must match)",
        k, l, first, len), 3)
    end
    if not T.is_tensor(d) or d.ptr.dev ~= -1 then all_tensors = false end
    ds[k] = d
  end
  rawset(self, '_datasets', ds)
  rawset(self, '_keys', keys)
  rawset(self, '_length', len)
  rawset(self, '_all_tensors', all_tensors)
end

function DictDataset:len() return self._length end

function DictDataset:get_example(i)
  local ex = {}
  for k, d in pairs(self._datasets) do ex[k] = P.get(d, i) end
  return ex
end

function DictDataset:get_examples(idx)
  if not self._all_tensors then return nil end
  local keys, list = self._keys, {}
  for i, k in ipairs(keys) do list[i] = self._datasets[k] end
  local arrays = gather.gather(list, idx)
  local out = {}
  for i, k in ipairs(keys) do out[k] = arrays[i] end
  return out
end

-- Sorted key names.
function DictDataset:keys()
  local out = {}
  for i, k in ipairs(self._keys) do out[i] = k end
  return out
end

return DictDataset

-- datasets/concatenated_dataset.lua: ConcatenatedDataset(d1, d2, ...): the
-- examples of d1, then those of d2, ...
local DatasetMixin = require 'chainer.dataset.dataset_mixin'
local P = require 'chainer.dataset.protocol'

local ConcatenatedDataset = DatasetMixin:extend('ConcatenatedDataset')

function ConcatenatedDataset:init(...)
  local n = select('#', ...)
  local ds, ends, total = {}, {}, 0
  for k = 1, n do
    local d = select(k, ...)
    if d == nil then error(string.format('ConcatenatedDataset: dataset %d is nil', k), 3) end
    total = total + P.len(d, 'ConcatenatedDataset')
    ds[k], ends[k] = d, total
  end
  self._datasets, self._ends, self._n, self._length = ds, ends, n, total
end

function ConcatenatedDataset:len() return self._length end

function ConcatenatedDataset:get_example(i)
  local ends = self._ends
  local prev = 0
  for k = 1, self._n do
    if i <= ends[k] then return P.get(self._datasets[k], i - prev) end
    prev = ends[k]
  end
end

return ConcatenatedDataset

-- datasets/transform_dataset.lua: TransformDataset(dataset, transform):
-- example i is transform(dataset[i]), computed on access (data augmentation).
local DatasetMixin = require 'chainer.dataset.dataset_mixin'
local P = require 'chainer.dataset.protocol'

local TransformDataset = DatasetMixin:extend('TransformDataset')

function TransformDataset:init(dataset, transform)
  local n = P.len(dataset, 'TransformDataset')
  if type(transform) ~= 'function' and not (type(transform) == 'table' and getmetatable(transform)
      and getmetatable(transform).__call) then
    error(string.format('TransformDataset: transform must be a function (got %s)', type(transform)), 3)
  end
  self._dataset, self._transform, self._length = dataset, transform, n
end

function TransformDataset:len() return self._length end

function TransformDataset:get_example(i)
  return self._transform(P.get(self._dataset, i))
end

return TransformDataset

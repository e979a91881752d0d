-- dataset/tabular/delegate_dataset.lua: DelegateDataset(dataset), a base
-- class for tabular datasets that forward everything to `self.dataset`
-- (Chainer's tabular.DelegateDataset):
--
--   local MyDataset = tabular.DelegateDataset:extend('MyDataset')
--   function MyDataset:init()
--     MyDataset.__super.init(self, tabular.from_data{{'a', xs}, {'b', ys}})
--   end
local TabularDataset = require 'chainer.dataset.tabular.tabular_dataset'
local args = require 'chainer._args'

local DelegateDataset = TabularDataset:extend('DelegateDataset')

function DelegateDataset:init(dataset)
  if type(dataset) ~= 'table' or not dataset._is_tabular then
    args.fail(string.format('DelegateDataset: dataset must be a TabularDataset (got %s)', type(dataset)), 3)
  end
  self.dataset = dataset
end

function DelegateDataset:len() return self.dataset:len() end
function DelegateDataset:_keys() return TabularDataset.keys_of(self.dataset) end
function DelegateDataset:_mode() return TabularDataset.mode_of(self.dataset) end
function DelegateDataset:get_examples(indices, key_indices) return self.dataset:get_examples(indices, key_indices) end

return DelegateDataset

-- chainer.dataset: the dataset protocol, converters and download helpers.
local convert = require 'chainer.dataset.convert'
local download = require 'chainer.dataset.download'
local protocol = require 'chainer.dataset.protocol'

local M = {}

M.DatasetMixin = require 'chainer.dataset.dataset_mixin'
M.Iterator = require 'chainer.dataset.iterator'
M.tabular = require 'chainer.dataset.tabular'
M.TabularDataset = M.tabular.TabularDataset

M.concat_examples = convert.concat_examples
M.concat_examples_func = convert.concat_examples_func
M.Converter = convert.Converter
M.to_device = convert.to_device
M.converter = convert.converter
M.ConcatWithAsyncTransfer = convert.ConcatWithAsyncTransfer

M.get_dataset_root = download.get_dataset_root
M.set_dataset_root = download.set_dataset_root
M.get_dataset_directory = download.get_dataset_directory
M.cached_download = download.cached_download
M.cache_or_load_file = download.cache_or_load_file

-- len(ds): the number of examples of any dataset (object, Lua array, tensor).
function M.len(ds) return protocol.len(ds, 'len') end

-- get_example(ds, i): example i (1-based, negatives from the end) of any dataset.
function M.get_example(ds, i)
  local n = protocol.len(ds, 'get_example')
  i = M.DatasetMixin.norm_index(i, n, 'get_example', 2)
  return protocol.get(ds, i)
end

return M

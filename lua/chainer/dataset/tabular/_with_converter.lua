-- dataset/tabular/_with_converter.lua: ds:with_converter(fn), the same data
-- with `convert` replaced: fn(col1, col2, ...) in tuple mode, fn(dict) in
-- dict mode (Lua has no keyword arguments), fn(col) in mode nil.
local TabularDataset = require 'chainer.dataset.tabular.tabular_dataset'
local args = require 'chainer._args'

local WithConverter = TabularDataset:extend('TabularWithConverter')

local callable = TabularDataset.is_callable

function WithConverter:init(dataset, converter)
  if not callable(converter) then
    args.fail(string.format('with_converter: converter must be a function (got %s)', type(converter)), 3)
  end
  self._dataset = dataset
  self._converter = converter
end

function WithConverter:len() return self._dataset:len() end
function WithConverter:_keys() return TabularDataset.keys_of(self._dataset) end
function WithConverter:_mode() return TabularDataset.mode_of(self._dataset) end
function WithConverter:get_examples(indices, key_indices) return self._dataset:get_examples(indices, key_indices) end

function WithConverter:_convert(data, mode)
  if mode == 'tuple' then return self._converter(unpack(data, 1, #data)) end
  return self._converter(data)
end

return WithConverter

-- dataset/tabular/_asmode.lua: ds:astuple() and ds:asdict(), the same rows
-- and keys with examples as {a, b, ...} or {a = ..., b = ...}.
local TabularDataset = require 'chainer.dataset.tabular.tabular_dataset'

local function as_mode(name, mode)
  local View = TabularDataset:extend(name)
  function View:init(dataset) self._dataset = dataset end
  function View:len() return self._dataset:len() end
  function View:_keys() return TabularDataset.keys_of(self._dataset) end
  function View:_mode() return mode end
  function View:get_examples(indices, key_indices) return self._dataset:get_examples(indices, key_indices) end
  function View:_convert(data, mode) return TabularDataset.convert_through(self._dataset, data, mode) end
  return View
end

return { Astuple = as_mode('TabularAstuple', 'tuple'), Asdict = as_mode('TabularAsdict', 'dict') }

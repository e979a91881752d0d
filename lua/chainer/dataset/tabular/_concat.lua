-- dataset/tabular/_concat.lua: a:concat(b, ...), the rows of several
-- datasets with the same keys one after another.
local TabularDataset = require 'chainer.dataset.tabular.tabular_dataset'
local cols = require 'chainer.dataset.tabular._columns'
local check_tabular = require('chainer.dataset.tabular._join').check_tabular
local args = require 'chainer._args'

local Concat = TabularDataset:extend('TabularConcat')

local keys_of = TabularDataset.keys_of

function Concat:init(...)
  local datasets = { ... }
  local n = select('#', ...)
  local keys1
  for k = 1, n do
    check_tabular('concat', datasets[k], k)
    local keys = keys_of(datasets[k])
    if k == 1 then
      keys1 = keys
    else
      local same = #keys == #keys1
      for j = 1, #keys do
        if keys[j] ~= keys1[j] then same = false end
      end
      if not same then
        args.fail(string.format('concat: dataset %d has keys (%s) but dataset 1 has (%s) (all datasets must have ' ..
          'the same keys)', k, table.concat(keys, ', '), table.concat(keys1, ', ')), 3)
      end
    end
  end
  self._datasets = datasets
end

function Concat:len()
  local n = 0
  for _, d in ipairs(self._datasets) do n = n + d:len() end
  return n
end

function Concat:_keys() return keys_of(self._datasets[1]) end
function Concat:_mode() return TabularDataset.mode_of(self._datasets[1]) end

function Concat:get_examples(indices, key_indices)
  local datasets = self._datasets
  local n_cols = key_indices and #key_indices or #keys_of(self)
  local parts = {}   -- parts[k]: the columns fetched from dataset k (or nil)
  local touched = {}
  local where = {}   -- where[p]: {dataset, row within what it returned}
  if indices == nil then
    for k, d in ipairs(datasets) do
      parts[k] = d:get_examples(nil, key_indices)
      touched[#touched + 1] = k
    end
  else
    local offset = 0
    for k, d in ipairs(datasets) do
      local m = d:len()
      local sub = {}
      for p, i in ipairs(indices) do
        if i >= offset and i < offset + m then
          sub[#sub + 1] = i - offset
          where[p] = { k, #sub - 1 }
        end
      end
      if #sub > 0 then
        parts[k] = d:get_examples(sub, key_indices)
        touched[#touched + 1] = k
      end
      offset = offset + m
    end
    if #touched == 0 then return datasets[1]:get_examples({}, key_indices) end
  end
  if #touched == 1 then return parts[touched[1]] end
  local out = {}
  for j = 1, n_cols do
    local pieces = {}
    for t, k in ipairs(touched) do pieces[t] = parts[k][j] end
    local joined = cols.concat(pieces)
    if indices ~= nil then
      -- the rows came grouped by dataset; put them back in the order asked
      local start, s = {}, 0
      for _, k in ipairs(touched) do
        start[k] = s
        s = s + cols.len(parts[k][j])
      end
      local order = {}
      for p = 1, #indices do order[p] = start[where[p][1]] + where[p][2] end
      joined = cols.take(joined, order)
    end
    out[j] = joined
  end
  return out
end

function Concat:_convert(data, mode) return TabularDataset.convert_through(self._datasets[1], data, mode) end

return Concat

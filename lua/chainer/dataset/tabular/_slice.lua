-- dataset/tabular/_slice.lua: ds:slice(rows, keys), a view of some rows and
-- columns of a tabular dataset (Chainer's ds.slice[rows, keys]).  Rows are
-- resolved once, at construction, into a Lua array of 0-based positions;
-- slicing a slice composes the positions.
local TabularDataset = require 'chainer.dataset.tabular.tabular_dataset'
local args = require 'chainer._args'
local T = require 'chainer.tensor'

local Slice = TabularDataset:extend('TabularSlice')

local ROWS = "rows must be nil, a {start, stop, step} table, a slice string such as '1:5', an integer tensor " ..
  'of 0-based positions (T.ints{...}) or a mask (a bool tensor or a Lua array of booleans)'

local function tensor_to_list(t)
  local c = t:contiguous():astype('int64')
  local p = T.ffi.cast('int64_t*', c.ptr.data) + c.ptr.offset
  local out = {}
  for k = 0, tonumber(c.ptr.dim[0]) - 1 do out[k + 1] = tonumber(p[k]) end
  return out
end

-- Positions 0..n-1 picked by `how` (a term t:slice or t:index understands).
local function pick(n, how, what)
  local ok, picked = pcall(function()
    local all = T.arange(n, 'int64')
    if type(how) == 'table' and not T.is_tensor(how) then return all:slice(how) end
    return all:index(how)
  end)
  if not ok then
    args.fail(string.format('slice: %s does not fit a dataset of %d rows (%s)', what,
      n, tostring(picked):gsub('^.-:%d+: ', '')), 4)
  end
  return tensor_to_list(picked)
end

local function mask_size_check(m, n)
  if m ~= n then
    args.fail(string.format('slice: the row mask has %d entries but the dataset has %d rows', m, n), 4)
  end
end

-- nil or a Lua array of 0-based positions.
local function as_indices(rows, n)
  if rows == nil then return nil end
  if type(rows) == 'string' then
    local terms = T.index_terms(rows)
    if #terms ~= 1 or type(terms[1]) ~= 'table' then
      args.fail(string.format("slice: the rows string '%s' must be one slice such as '1:5' or '::-1'", rows), 3)
    end
    return pick(n, terms[1], "rows '" .. rows .. "'")
  end
  if T.is_tensor(rows) then
    local dt = rows.dtype
    if rows.ptr.nd ~= 1 then
      args.fail(string.format('slice: a rows tensor must be 1-D (got %d dimensions)', rows.ptr.nd), 3)
    end
    if dt == 'bool' then
      mask_size_check(tonumber(rows.ptr.dim[0]), n)
    elseif not dt:match('int') then
      args.fail(string.format('slice: a rows tensor holds integer positions or booleans (got %s)', dt), 3)
    end
    return pick(n, rows, 'the rows tensor')
  end
  if type(rows) == 'table' and getmetatable(rows) == nil then
    if type(rows[1]) == 'boolean' then
      for k = 1, #rows do
        if type(rows[k]) ~= 'boolean' then
          args.fail(string.format('slice: row mask entry %d is a %s (expected booleans)', k, type(rows[k])), 3)
        end
      end
      mask_size_check(#rows, n)
      local out = {}
      for k = 1, n do
        if rows[k] then out[#out + 1] = k - 1 end
      end
      return out
    end
    for k = 1, 3 do
      local v = rows[k]
      if v ~= nil and v ~= '_' and (type(v) ~= 'number' or v ~= math.floor(v)) then
        args.fail(string.format('slice: rows {start, stop, step} entry %d is %s (expected an integer or nil); ' ..
          'for a list of positions use T.ints{...}', k, tostring(v)), 3)
      end
    end
    if rows[3] == 0 or rows.step == 0 then args.fail('slice: the rows step must not be zero', 3) end
    return pick(n, rows, 'the rows slice')
  end
  local hint = type(rows) == 'number' and ' (one example is ds[i])' or ''
  args.fail(string.format('slice: %s; got %s%s', ROWS, type(rows), hint), 3)
end

-- Lua array of key names or 0-based positions -> 0-based positions.
local function as_key_indices(keys, names)
  if keys == nil then return nil end
  local out = {}
  for k = 1, #keys do
    local key = keys[k]
    if type(key) == 'number' then
      local j = key
      if j ~= math.floor(j) then args.fail(string.format('slice: key position %s is not an integer', key), 3) end
      if j < 0 then j = j + #names end
      if j < 0 or j >= #names then
        args.fail(string.format('slice: key position %d is out of range for %d keys (0-based: 0..%d)', key, #names,
          #names - 1), 3)
      end
      out[k] = j
    elseif type(key) == 'string' then
      local found
      for j = 1, #names do
        if names[j] == key then found = j - 1 break end
      end
      if found == nil then
        args.fail(string.format("slice: no key '%s' (keys: %s)", key, table.concat(names, ', ')), 3)
      end
      out[k] = found
    else
      args.fail(string.format('slice: a key is a name or a 0-based position (got %s)', type(key)), 3)
    end
  end
  return out
end

-- b's positions (into a view) mapped through a's (into its dataset).
local function merge(a, b)
  if a == nil then return b end
  if b == nil then return a end
  local out = {}
  for k = 1, #b do out[k] = a[b[k] + 1] end
  return out
end

function Slice:init(dataset, rows, keys)
  local unary
  if keys == nil then
    unary = nil
  elseif type(keys) == 'table' and not T.is_tensor(keys) then
    unary = false
  else
    unary = true
    keys = { keys }
  end
  self._dataset = dataset
  self._unary = unary
  self._indices = as_indices(rows, dataset:len())
  self._key_indices = as_key_indices(keys, TabularDataset.keys_of(dataset))
end

function Slice:len()
  if self._indices == nil then return self._dataset:len() end
  return #self._indices
end

function Slice:_keys()
  local names = TabularDataset.keys_of(self._dataset)
  if self._key_indices == nil then return names end
  local out = {}
  for k, j in ipairs(self._key_indices) do out[k] = names[j + 1] end
  return out
end

function Slice:_mode()
  if self._unary == nil then return TabularDataset.mode_of(self._dataset) end
  if self._unary then return nil end
  return TabularDataset.mode_of(self._dataset) or 'tuple'
end

function Slice:get_examples(indices, key_indices)
  return self._dataset:get_examples(merge(self._indices, indices), merge(self._key_indices, key_indices))
end

function Slice:_convert(data, mode) return TabularDataset.convert_through(self._dataset, data, mode) end

return Slice

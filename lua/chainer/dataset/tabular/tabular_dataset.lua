-- dataset/tabular/tabular_dataset.lua: Chainer's TabularDataset, a dataset
-- whose examples all have the same named columns ("keys").
--
-- A subclass defines:
--   ds:len()                              the number of rows
--   ds.keys                               a Lua array of column names
--   ds.mode                               'tuple', 'dict' or nil (Chainer's
--                                         tuple, dict and None)
--   ds:get_examples(indices, key_indices) the requested part of the table
-- `keys` and `mode` are fields (set in init or on the class) or methods.
-- get_examples receives `indices`, nil (every row) or a Lua array of 0-based
-- row positions, and `key_indices`, nil (every column) or a Lua array of
-- 0-based column positions, and returns a Lua array with one column per
-- requested key: a tensor (rows along axis 0) or a Lua array of values.
--
-- Examples are 1-based as in every chainlua dataset (ds[1] is row 0);
-- ds:slice(rows, keys) takes 0-based rows as tensor indexing does.
local DatasetMixin = require 'chainer.dataset.dataset_mixin'
local cols = require 'chainer.dataset.tabular._columns'
local args = require 'chainer._args'
local T = require 'chainer.tensor'

local TabularDataset = DatasetMixin:extend('TabularDataset')
TabularDataset._is_tabular = true

local norm_index = DatasetMixin.norm_index

local function view(name) return require('chainer.dataset.tabular.' .. name) end

local function class_name(ds) return tostring(getmetatable(ds).__name) end

-- Whether f can be called: a function or a table with __call (a Converter).
function TabularDataset.is_callable(f)
  if type(f) == 'function' then return true end
  local mt = type(f) == 'table' and getmetatable(f)
  return mt and mt.__call ~= nil or false
end

-- ds[i] for numbers; `keys` and `mode` fall back to the _keys / _mode
-- methods of the built-in views.
TabularDataset.__index = function(self, k)
  local cls = getmetatable(self)
  if type(k) == 'number' then
    local i = norm_index(k, cls.len(self), 'dataset[i]', 2)
    return cls.get_example(self, i)
  end
  local v = cls[k]
  if v ~= nil then return v end
  if k == 'keys' then
    local f = cls._keys
    if f == nil then
      args.fail(string.format('%s defines no keys (set self.keys to a Lua array of column names)', class_name(self)), 2)
    end
    return f(self)
  end
  if k == 'mode' then
    local f = cls._mode
    if f ~= nil then return f(self) end
  end
end

-- The column names of any tabular dataset, checked.
local function keys_of(ds)
  local keys = ds.keys
  if type(keys) == 'function' then keys = keys(ds) end
  if type(keys) ~= 'table' then
    args.fail(string.format('%s: keys must be a Lua array of strings (got %s)', class_name(ds), type(keys)), 3)
  end
  for j = 1, #keys do
    if type(keys[j]) ~= 'string' then
      args.fail(string.format('%s: key %d is a %s (keys are strings)', class_name(ds), j, type(keys[j])), 3)
    end
  end
  return keys
end
TabularDataset.keys_of = keys_of

-- The mode of any tabular dataset, checked: 'tuple', 'dict' or nil.
local function mode_of(ds)
  local mode = ds.mode
  if type(mode) == 'function' then mode = mode(ds) end
  if mode == nil then
    local user_class = getmetatable(ds)._mode == nil
    if user_class and #keys_of(ds) > 1 then
      args.fail(string.format("%s has %d keys but no mode (set self.mode to 'tuple' or 'dict')", class_name(ds),
        #keys_of(ds)), 3)
    end
    return nil
  end
  if mode ~= 'tuple' and mode ~= 'dict' then
    args.fail(string.format("%s: mode must be 'tuple', 'dict' or nil (got %s)", class_name(ds), tostring(mode)), 3)
  end
  return mode
end
TabularDataset.mode_of = mode_of

function TabularDataset:get_examples(indices, key_indices)
  args.fail(string.format('%s: get_examples is not implemented (a TabularDataset must define ' ..
    'get_examples(indices, key_indices))', class_name(self)), 2)
end

-- Columns of the requested rows and keys, checked.
function TabularDataset:_columns(indices, key_indices)
  local n = key_indices and #key_indices or #keys_of(self)
  local columns = self:get_examples(indices, key_indices)
  return cols.check(self, columns, n, indices and #indices or nil)
end

-- Shapes per-column data as the mode says: a Lua array of columns, a table
-- key -> column, or the first column alone.
local function shaped(columns, mode, keys)
  if mode == 'tuple' then return columns end
  if mode == 'dict' then
    local out = {}
    for j = 1, #keys do out[keys[j]] = columns[j] end
    return out
  end
  return columns[1]
end

-- Example i (1-based), as the mode says: {a, b, ...}, {a = ..., b = ...} or a value.
function TabularDataset:get_example(i)
  local columns = self:_columns({ i - 1 }, nil)
  local row = {}
  for j = 1, #columns do row[j] = cols.row(columns[j], 0) end
  return shaped(row, mode_of(self), keys_of(self))
end

-- Every row, column by column: ({a...}, {b...}), {a = {...}, b = {...}} or {a...}.
function TabularDataset:fetch()
  return shaped(self:_columns(nil, nil), mode_of(self), keys_of(self))
end

-- A column as one tensor (Chainer's numpy.asarray): tensors stay, lists of
-- tensors are stacked, lists of numbers become an int32 or float tensor.
local function as_array(col)
  if T.is_tensor(col) then return col end
  if #col == 0 then return T.empty({ 0 }, T.default_float) end
  return require('chainer.dataset.convert').concat_examples_func(col)
end

-- Fetched data -> tensors, column by column (with_converter replaces this).
-- Views pass the conversion down to the dataset they come from (Chainer:
-- the first dataset of a join or concat) together with their own mode,
-- which says how `data` is laid out.
function TabularDataset:convert(data)
  return self:_convert(data, mode_of(self))
end

function TabularDataset:_convert(data, mode)
  if mode == 'tuple' then
    local out = {}
    for j = 1, #data do out[j] = as_array(data[j]) end
    return out
  elseif mode == 'dict' then
    local out = {}
    for k, v in pairs(data) do out[k] = as_array(v) end
    return out
  end
  return as_array(data)
end

-- How a view converts through dataset `ds`: its own convert when its class
-- replaced TabularDataset's, else the default for the view's mode.
function TabularDataset.convert_through(ds, data, mode)
  if ds.convert ~= TabularDataset.convert then return ds:convert(data) end
  return ds:_convert(data, mode)
end

function TabularDataset:astuple() return view('_asmode').Astuple(self) end
function TabularDataset:asdict() return view('_asmode').Asdict(self) end
-- the spellings of chainlua's issue tracker, same methods
TabularDataset.as_tuple = TabularDataset.astuple
TabularDataset.as_dict = TabularDataset.asdict

-- A view of some rows and keys (Chainer's ds.slice[rows, keys]).
-- rows: nil (all), a {start, stop, step} table or a Python-syntax string
-- ('1:5', '::-1') with 0-based bounds, an integer tensor of 0-based positions
-- (T.ints{3, 0}, negatives from the end) or a mask (a bool tensor or a Lua
-- array of booleans, one per row).  keys: nil (all, mode unchanged), one key
-- (a name or a 0-based column position: the view's mode is nil) or a Lua
-- array of them (mode tuple unless the dataset's is dict).
function TabularDataset:slice(rows, keys)
  return view('_slice')(self, rows, keys)
end

function TabularDataset:concat(...) return view('_concat')(self, ...) end
function TabularDataset:join(...) return view('_join')(self, ...) end

function TabularDataset:transform(keys, fn)
  return view('_transform').Transform(self, keys, fn)
end

function TabularDataset:transform_batch(keys, fn)
  return view('_transform').TransformBatch(self, keys, fn)
end

function TabularDataset:with_converter(converter)
  return view('_with_converter')(self, converter)
end

-- The iterators' batch fast path (dataset/protocol.lua): the batch for the
-- 0-based positions `idx` (an int64 tensor), stacked when every column is a
-- CPU tensor, else nil and the batch as a Lua array of examples.
function TabularDataset:_gather_batch(idx)
  local c = idx:contiguous()
  local p = T.ffi.cast('int64_t*', c.ptr.data) + c.ptr.offset
  local rows = {}
  for k = 0, tonumber(c.ptr.dim[0]) - 1 do rows[k + 1] = tonumber(p[k]) end
  local columns = self:_columns(rows, nil)
  local mode, keys = mode_of(self), keys_of(self)
  local stacked = true
  for j = 1, #columns do
    local col = columns[j]
    if not T.is_tensor(col) or col.ptr.dev ~= -1 or col.ptr.nd == 0 then stacked = false break end
  end
  if stacked then return shaped(columns, mode, keys) end
  local batch = {}
  for r = 1, #rows do
    local row = {}
    for j = 1, #columns do row[j] = cols.row(columns[j], r - 1) end
    batch[r] = shaped(row, mode, keys)
  end
  return nil, batch
end

return TabularDataset

-- dataset/tabular/from_data.lua: chainer.dataset.tabular.from_data, a
-- TabularDataset from tensors, Lua arrays and functions.
--
--   from_data(xs)                         one column (a tensor or a Lua array)
--   from_data({'a', xs})                  one column named 'a'
--   from_data({'a', fn}, {size = n})      column 'a' computed as fn(i), i = 0-based row
--   from_data({{'d', 'e'}, fn}, {size = n})  fn(i) returns {d, e} or {d = .., e = ..}
--   from_data{{'a', xs}, {'b', fn}}       several columns, tuple mode
--   from_data{a = xs, b = ys}             several columns, dict mode (keys sorted)
-- Python tells a list of examples from a tuple of columns by its type; Lua
-- cannot, so a Lua array is read as columns only when it is a {name, data}
-- pair or when every element is one (or a tensor, an unnamed column).
local TabularDataset = require 'chainer.dataset.tabular.tabular_dataset'
local args = require 'chainer._args'
local T = require 'chainer.tensor'

local OPTIONS = args.accept { 'size' }

local is_tensor = T.is_tensor

local function is_list(v) return type(v) == 'table' and getmetatable(v) == nil end

local callable = TabularDataset.is_callable

---------------------------------------------------------------------------
-- one-column datasets
---------------------------------------------------------------------------
local function column_class(name, take)
  local C = TabularDataset:extend(name)
  function C:init(key, data) self._key, self._data = key, data end
  function C:_keys() return { self._key } end
  function C:_mode() return nil end
  function C:get_examples(indices, key_indices)
    local col = indices == nil and self._data or take(self._data, indices)
    local out = {}
    for k = 1, key_indices and #key_indices or 1 do out[k] = col end
    return out
  end
  return C
end

local cols = require 'chainer.dataset.tabular._columns'
local Array = column_class('TabularArray', cols.take)
function Array:len() return tonumber(self._data.ptr.dim[0]) end
local List = column_class('TabularList', cols.take)
function List:len() return #self._data end

-- Rows 0..size-1 as one column named 'index' (the 0-based positions).
local Index = column_class('TabularIndex', function(_, indices) return indices end)
function Index:len() return self._size end
function Index:init(size) self._key, self._size = 'index', size end
function Index:get_examples(indices, key_indices)
  if indices == nil then
    indices = {}
    for i = 1, self._size do indices[i] = i - 1 end
  end
  local out = {}
  for k = 1, key_indices and #key_indices or 1 do out[k] = indices end
  return out
end

---------------------------------------------------------------------------
-- from_data
---------------------------------------------------------------------------
local unnamed = 0

local function is_key(k)
  if type(k) == 'string' then return true end
  if not is_list(k) or #k == 0 then return false end
  for j = 1, #k do
    if type(k[j]) ~= 'string' then return false end
  end
  return true
end

local function is_data(d) return is_tensor(d) or is_list(d) or callable(d) end

-- A {name, data} pair (exactly two entries).
local function is_pair(v)
  if not is_list(v) or #v ~= 2 or not is_key(v[1]) or not is_data(v[2]) then return false end
  for k in pairs(v) do
    if k ~= 1 and k ~= 2 then return false end
  end
  return true
end

local function length_of(d)
  if is_tensor(d) then
    if d.ptr.nd == 0 then args.fail('from_data: a 0-d tensor is not a column (expected at least 1 dimension)', 5) end
    return tonumber(d.ptr.dim[0])
  end
  if is_list(d) then return #d end
end

local function make(key, data, size)
  if is_tensor(data) or is_list(data) then
    if key == nil then
      unnamed = unnamed + 1
      key = '_' .. unnamed
    end
    if type(key) ~= 'string' then
      args.fail('from_data: a tensor or a Lua array is one column: name it with one string', 4)
    end
    length_of(data)
    return is_tensor(data) and Array(key, data) or List(key, data)
  end
  if callable(data) then
    if key == nil then args.fail('from_data: a function needs key(s): write {name, fn}', 4) end
    if size == nil then
      args.fail('from_data: size must be given ({size = n}) when no column is a tensor or a Lua array', 4)
    end
    return Index(size):transform(key, data)
  end
  args.fail(string.format('from_data: a column is a tensor, a Lua array or a function (got %s)', type(data)), 4)
end

local function check_size(size)
  if size ~= nil and (type(size) ~= 'number' or size ~= math.floor(size) or size < 0) then
    args.fail(string.format('from_data: size must be a non-negative integer (got %s)', tostring(size)), 4)
  end
end

local function size_from(size, list)
  if size ~= nil then return size end
  for _, d in ipairs(list) do
    local n = length_of(d)
    if n ~= nil then return n end
  end
end

local function from_data(data, opts)
  opts = args.options('from_data', opts, OPTIONS)
  local size = opts.size
  check_size(size)
  if is_pair(data) then return make(data[1], data[2], size) end
  if is_list(data) and data[1] == nil and next(data) ~= nil then
    -- {a = xs, b = ys}: dict mode, keys in sorted order
    local names, values = {}, {}
    for k in pairs(data) do
      if type(k) ~= 'string' then
        args.fail(string.format('from_data: a table of columns has string keys (got %s)', type(k)), 3)
      end
      names[#names + 1] = k
    end
    table.sort(names)
    for j, k in ipairs(names) do values[j] = data[k] end
    size = size_from(size, values)
    local datasets = {}
    for j, k in ipairs(names) do datasets[j] = make(k, values[j], size) end
    return datasets[1]:join(unpack(datasets, 2)):asdict()
  end
  if is_list(data) and #data > 0 then
    local columns, any_pair = true, false
    for _, v in ipairs(data) do
      if is_pair(v) then any_pair = true elseif not is_tensor(v) then columns = false end
    end
    if columns and any_pair then
      local raw = {}
      for j, v in ipairs(data) do raw[j] = is_pair(v) and v[2] or v end
      size = size_from(size, raw)
      local datasets = {}
      for j, v in ipairs(data) do
        if is_pair(v) then datasets[j] = make(v[1], v[2], size) else datasets[j] = make(nil, v, size) end
      end
      return datasets[1]:join(unpack(datasets, 2)):astuple()
    end
  end
  return make(nil, data, size)
end

return from_data

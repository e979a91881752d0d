-- dataset/tabular/_transform.lua: ds:transform(keys, fn) and
-- ds:transform_batch(keys, fn), new columns computed from each row or from
-- whole columns on access.
--
-- transform calls fn(a, b, ...) per row in tuple mode, fn{a = ..., b = ...}
-- in dict mode (Lua has no keyword arguments) and fn(a) in mode nil; what fn
-- returns sets the view's mode: a Lua array -> tuple, a table with string
-- keys -> dict, anything else (a tensor, a number, ...) -> nil.  The mode is
-- found by transforming row 0 the first time it is asked for, and fn must
-- keep returning the same kind.  transform_batch does the same with whole
-- columns (it must keep their length).
local TabularDataset = require 'chainer.dataset.tabular.tabular_dataset'
local cols = require 'chainer.dataset.tabular._columns'
local args = require 'chainer._args'
local T = require 'chainer.tensor'

local keys_of, mode_of = TabularDataset.keys_of, TabularDataset.mode_of

local callable = TabularDataset.is_callable

local function as_keys(fn, keys)
  if type(keys) == 'string' then return { keys } end
  if type(keys) ~= 'table' or T.is_tensor(keys) or #keys == 0 then
    args.fail(string.format('%s: keys must be a name or a Lua array of names (got %s)', fn, type(keys)), 4)
  end
  for j = 1, #keys do
    if type(keys[j]) ~= 'string' then
      args.fail(string.format('%s: key %d is a %s (keys are strings)', fn, j, type(keys[j])), 4)
    end
  end
  return keys
end

-- 'tuple', 'dict' or 'single' (mode nil) for a value fn returned.
local function kind_of(v)
  if type(v) ~= 'table' or getmetatable(v) ~= nil then return 'single' end
  if v[1] ~= nil or next(v) == nil then return 'tuple' end
  return 'dict'
end

local MODE_OF_KIND = { tuple = 'tuple', dict = 'dict', single = nil }

local function base(name, fn_name)
  local View = TabularDataset:extend(name)
  function View:init(dataset, keys, fn)
    if not callable(fn) then
      args.fail(string.format('%s: expected a function (got %s)', fn_name, type(fn)), 3)
    end
    self._dataset = dataset
    self._keys_list = as_keys(fn_name, keys)
    self._fn = fn
  end
  function View:len() return self._dataset:len() end
  function View:_keys() return self._keys_list end
  function View:_mode()
    if self._kind == nil then
      if self._dataset:len() == 0 then
        args.fail(string.format('%s: the mode of a transformed empty dataset is unknown (it comes from what the ' ..
          'function returns)', fn_name), 3)
      end
      self:get_examples({ 0 }, nil)
    end
    return MODE_OF_KIND[self._kind]
  end
  function View:_convert(data, mode) return TabularDataset.convert_through(self._dataset, data, mode) end
  -- Remembers the kind of the first result; later ones must match.
  function View:_saw(kind)
    if self._kind == nil then
      self._kind = kind
    elseif self._kind ~= kind then
      args.fail(string.format('%s must not change its return type (returned a %s, earlier a %s)', fn_name,
        kind == 'single' and 'single value' or kind, self._kind == 'single' and 'single value' or self._kind), 4)
    end
  end
  -- Column j of fn's result `out` of kind `kind`.
  function View:_pick(out, kind, j, what)
    local keys = self._keys_list
    local v
    if kind == 'tuple' then
      v = out[j + 1]
    elseif kind == 'dict' then
      v = out[keys[j + 1]]
    elseif j == 0 then
      v = out
    end
    if v == nil then
      args.fail(string.format("%s: the function's result has no value for key '%s' (%s)", fn_name, keys[j + 1],
        what), 4)
    end
    return v
  end
  return View
end

local Transform = base('TabularTransform', 'transform')
local TransformBatch = base('TabularTransformBatch', 'transform_batch')

local function all_keys(n)
  local out = {}
  for j = 1, n do out[j] = j - 1 end
  return out
end

-- Calls fn on one row (or on whole columns) of dataset d as d's mode says.
local function call(fn, d, values)
  local mode = mode_of(d)
  if mode == 'dict' then
    local keys, named = keys_of(d), {}
    for j = 1, #keys do named[keys[j]] = values[j] end
    return fn(named)
  end
  return fn(unpack(values, 1, #keys_of(d)))
end

function Transform:get_examples(indices, key_indices)
  key_indices = key_indices or all_keys(#self._keys_list)
  local d = self._dataset
  local inputs = d:get_examples(indices, nil)
  local n = indices and #indices or d:len()
  local out = {}
  for k = 1, #key_indices do out[k] = {} end
  local row = {}
  for r = 0, n - 1 do
    for j = 1, #inputs do row[j] = cols.row(inputs[j], r) end
    local result = call(self._fn, d, row)
    local kind = kind_of(result)
    self:_saw(kind)
    for k, j in ipairs(key_indices) do
      out[k][r + 1] = self:_pick(result, kind, j, 'row ' .. r)
    end
  end
  return out
end

function TransformBatch:get_examples(indices, key_indices)
  key_indices = key_indices or all_keys(#self._keys_list)
  local d = self._dataset
  local n = indices and #indices or d:len()
  local result = call(self._fn, d, d:get_examples(indices, nil))
  local kind = kind_of(result)
  self:_saw(kind)
  local out = {}
  for k, j in ipairs(key_indices) do
    local col = self:_pick(result, kind, j, 'a batch')
    if not cols.is_column(col) or cols.len(col) ~= n then
      args.fail(string.format("transform_batch must not change the length of data (column '%s' has %s rows, " ..
        'expected %d)', self._keys_list[j + 1], cols.is_column(col) and tostring(cols.len(col)) or 'no', n), 3)
    end
    out[k] = col
  end
  return out
end

return { Transform = Transform, TransformBatch = TransformBatch }

-- dataset/dataset_mixin.lua: the dataset protocol (Chainer's DatasetMixin).
--
-- A dataset is anything with a length and 1-based examples:
--   ds:len()            number of examples (`#ds` only where LuaJIT honours
--                       __len on tables, i.e. builds with LUAJIT_ENABLE_LUA52COMPAT;
--                       use ds:len() or chainer.dataset.len(ds) in portable code)
--   ds[i], ds:get_example(i)   example i (1-based; negative i counts from the end)
--   ds:slice(i, j)      examples i..j as a Lua array (inclusive, like string.sub)
-- Subclasses override `len` and `get_example`; ds[i] checks the range once
-- so get_example implementations may assume 1 <= i <= len.
local class = require 'chainer.class'

local DatasetMixin = class.Object:extend('DatasetMixin')

local floor = math.floor

-- Normalises a 1-based (or negative) position; raises a clear error.
local function norm_index(i, n, fn, level)
  if type(i) ~= 'number' or i ~= floor(i) then
    error(string.format('%s: index must be an integer (got %s)', fn, tostring(i)), level + 1)
  end
  if i < 0 then i = n + 1 + i end
  if i < 1 or i > n then
    local hint = i == 0 and ' (datasets are 1-based: the first example is ds[1])' or ''
    error(string.format('%s: index %d is out of range for a dataset of %d examples (expected 1..%d or -%d..-1)%s',
      fn, i, n, n, n, hint), level + 1)
  end
  return i
end
DatasetMixin.norm_index = norm_index

-- ds[i] for numbers; other keys find methods along the class chain.
DatasetMixin.__index = function(self, k)
  local cls = getmetatable(self)
  if type(k) == 'number' then
    local i = norm_index(k, cls.len(self), 'dataset[i]', 2)
    return cls.get_example(self, i)
  end
  return cls[k]
end

DatasetMixin.__len = function(self) return self:len() end

function DatasetMixin:len()
  error(string.format('%s: len is not implemented (a dataset class must define len)',
    tostring(getmetatable(self).__name)), 2)
end

function DatasetMixin:get_example(i)
  error(string.format('%s: get_example is not implemented (a dataset class must define get_example)',
    tostring(getmetatable(self).__name)), 2)
end

-- Examples i..j (1-based, inclusive; negatives count from the end; j
-- defaults to the last) as a Lua array, like string.sub: out-of-range
-- bounds are clamped and an empty range gives {}.
function DatasetMixin:slice(i, j)
  local n = self:len()
  i = i or 1
  j = j or n
  if type(i) ~= 'number' or type(j) ~= 'number' or i ~= floor(i) or j ~= floor(j) then
    error(string.format('slice: bounds must be integers (got %s, %s)', tostring(i), tostring(j)), 2)
  end
  if i < 0 then i = n + 1 + i end
  if j < 0 then j = n + 1 + j end
  if i < 1 then i = 1 end
  if j > n then j = n end
  local out = {}
  for k = i, j do out[#out + 1] = self:get_example(k) end
  return out
end

-- for i, example in ds:iter() do ... end
function DatasetMixin:iter()
  local n, i = self:len(), 0
  return function()
    i = i + 1
    if i <= n then return i, self:get_example(i) end
  end
end

return DatasetMixin

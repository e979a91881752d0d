-- dataset/tabular/_join.lua: a:join(b, ...), the columns of several
-- datasets of equal length side by side (keys must not repeat).
local TabularDataset = require 'chainer.dataset.tabular.tabular_dataset'
local args = require 'chainer._args'

local Join = TabularDataset:extend('TabularJoin')

local keys_of, mode_of = TabularDataset.keys_of, TabularDataset.mode_of

local function check_tabular(fn, d, k)
  if type(d) ~= 'table' or not d._is_tabular then
    args.fail(string.format('%s: dataset %d is not a TabularDataset (got %s)', fn, k, type(d)), 4)
  end
end

function Join:init(...)
  local datasets = { ... }
  local n = select('#', ...)
  local seen = {}
  for k = 1, n do
    local d = datasets[k]
    check_tabular('join', d, k)
    if d:len() ~= datasets[1]:len() then
      args.fail(string.format('join: dataset %d has %d rows but dataset 1 has %d (all datasets must have the ' ..
        'same length)', k, d:len(), datasets[1]:len()), 3)
    end
    for _, key in ipairs(keys_of(d)) do
      if seen[key] then
        args.fail(string.format("join: key '%s' appears in dataset %d and dataset %d (keys must be unique)", key,
          seen[key], k), 3)
      end
      seen[key] = k
    end
  end
  self._datasets = datasets
end

function Join:len() return self._datasets[1]:len() end

function Join:_keys()
  local out = {}
  for _, d in ipairs(self._datasets) do
    for _, key in ipairs(keys_of(d)) do out[#out + 1] = key end
  end
  return out
end

-- The first dataset's mode that is not nil, else tuple.
function Join:_mode()
  for _, d in ipairs(self._datasets) do
    local m = mode_of(d)
    if m ~= nil then return m end
  end
  return 'tuple'
end

function Join:get_examples(indices, key_indices)
  local out = {}
  if key_indices == nil then
    for _, d in ipairs(self._datasets) do
      for _, col in ipairs(d:get_examples(indices, nil)) do out[#out + 1] = col end
    end
    return out
  end
  -- ask each dataset once for its own columns among key_indices
  local by_key = {}
  local offset = 0
  for _, d in ipairs(self._datasets) do
    local width = #keys_of(d)
    local sub, asked = {}, {}
    for _, j in ipairs(key_indices) do
      local s = j - offset
      if s >= 0 and s < width and not asked[s] then
        asked[s] = true
        sub[#sub + 1] = s
      end
    end
    if #sub > 0 then
      local got = d:get_examples(indices, sub)
      for k, s in ipairs(sub) do by_key[offset + s] = got[k] end
    end
    offset = offset + width
  end
  for k, j in ipairs(key_indices) do out[k] = by_key[j] end
  return out
end

function Join:_convert(data, mode) return TabularDataset.convert_through(self._datasets[1], data, mode) end

Join.check_tabular = check_tabular
return Join

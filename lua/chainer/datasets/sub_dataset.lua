-- datasets/sub_dataset.lua: SubDataset and the split helpers.
--
-- SubDataset(dataset, start, finish, [order]) has the examples start+1 ..
-- finish of `dataset` (1-based, inclusive) -- the same two numbers as
-- Chainer's half-open [start, finish), so split points carry over.  With
-- `order` (a permutation: an int64 tensor of 0-based positions, as from
-- chainer.tensor.random.permutation, or a Lua array of 1-based positions),
-- example i is dataset[order[start + i]].
local DatasetMixin = require 'chainer.dataset.dataset_mixin'
local P = require 'chainer.dataset.protocol'
local rng = require 'chainer.dataset.rng'
local T = require 'chainer.tensor'
local ffi = T.ffi

local floor = math.floor

local SubDataset = DatasetMixin:extend('SubDataset')

local function check_int(v, fn, what, level)
  if type(v) ~= 'number' or v ~= floor(v) then
    error(string.format('%s: %s must be an integer (got %s)', fn, what, tostring(v)), level + 1)
  end
  return v
end

-- An int64 tensor of 0-based positions from a tensor or a 1-based Lua array.
local function order_tensor(order, n, fn, level)
  if order == nil then return nil end
  local t
  if T.is_tensor(order) then
    if order.ptr.nd ~= 1 then
      error(string.format('%s: order must be 1-D (got %d dimensions)', fn, order.ptr.nd), level + 1)
    end
    -- our own contiguous copy: the caller may reuse theirs
    t = order:astype('int64'):contiguous()
  elseif type(order) == 'table' then
    local zero = {}
    for i = 1, #order do
      local v = check_int(order[i], fn, 'order[' .. i .. ']', level + 1)
      zero[i] = v - 1
    end
    t = T.array(zero, 'int64')
    if #order == 0 then t = T.empty({ 0 }, 'int64') end
  else
    error(string.format('%s: order must be an int64 tensor of 0-based positions or a Lua array of 1-based ' ..
      'positions (got %s)', fn, type(order)), level + 1)
  end
  local m = tonumber(t.ptr.dim[0])
  if m ~= n then
    error(string.format('%s: order has %d entries but the dataset has %d examples', fn, m, n), level + 1)
  end
  local p = ffi.cast('int64_t*', t.ptr.data) + t.ptr.offset
  for i = 0, m - 1 do
    local v = p[i]
    if v < 0 or v >= n then
      error(string.format('%s: order[%d] = %d is out of range (expected 0-based positions 0..%d)', fn, i,
        tonumber(v), n - 1), level + 1)
    end
  end
  return t
end

function SubDataset:init(dataset, start, finish, order)
  local n = P.len(dataset, 'SubDataset')
  check_int(start, 'SubDataset', 'start', 3)
  check_int(finish, 'SubDataset', 'finish', 3)
  if start < 0 or finish < start or finish > n then
    error(string.format('SubDataset: the range start=%d, finish=%d does not fit a dataset of %d examples ' ..
      '(expected 0 <= start <= finish <= %d)', start, finish, n, n), 3)
  end
  self._dataset = dataset
  self._start = start
  self._finish = finish
  self._size = finish - start
  local o = order_tensor(order, n, 'SubDataset', 3)
  self._order = o
  if o then self._order_ptr = ffi.cast('int64_t*', o.ptr.data) + o.ptr.offset end
end

function SubDataset:len() return self._size end

-- Position in the base dataset (1-based) of example i.
function SubDataset:base_index(i)
  local j = self._start + i     -- 1-based position in the (ordered) base
  local p = self._order_ptr
  if p ~= nil then return tonumber(p[j - 1]) + 1 end
  return j
end

function SubDataset:get_example(i)
  return P.get(self._dataset, self:base_index(i))
end

function SubDataset:get_examples(idx)
  local base = self._dataset
  if not (T.is_tensor(base) or (type(base) == 'table' and base.get_examples ~= nil)) then return nil end
  local j = idx + self._start
  if self._order then j = self._order:take(j, 0) end
  return P.gather(base, j)
end

---------------------------------------------------------------------------
-- split helpers
---------------------------------------------------------------------------
local M = { SubDataset = SubDataset }

-- split_dataset(dataset, split_at, [order]) -> first, rest
function M.split_dataset(dataset, split_at, order)
  local n = P.len(dataset, 'split_dataset')
  check_int(split_at, 'split_dataset', 'split_at', 2)
  if split_at < 0 or split_at > n then
    error(string.format('split_dataset: split_at %d is out of range for a dataset of %d examples (expected 0..%d)',
      split_at, n, n), 2)
  end
  local o = order_tensor(order, n, 'split_dataset', 2)
  return SubDataset(dataset, 0, split_at, o), SubDataset(dataset, split_at, n, o)
end

local function random_order(n, seed, fn)
  seed = rng.check_seed(seed, fn, 3)
  if seed == nil then return T.random.permutation(n) end
  return (rng.permutation(n, seed, 0))
end

-- split_dataset_random(dataset, first_size, [seed]) -> first, rest
-- The same seed always gives the same split (a private stream, see dataset/rng.lua).
function M.split_dataset_random(dataset, first_size, seed)
  local n = P.len(dataset, 'split_dataset_random')
  check_int(first_size, 'split_dataset_random', 'first_size', 2)
  if first_size < 0 or first_size > n then
    error(string.format('split_dataset_random: first_size %d is out of range for a dataset of %d examples ' ..
      '(expected 0..%d)', first_size, n, n), 2)
  end
  return M.split_dataset(dataset, first_size, random_order(n, seed, 'split_dataset_random'))
end

-- split_dataset_n(dataset, n, [order]) -> Lua array of n subsets of
-- floor(len / n) examples each (the remainder is left out, as in Chainer).
function M.split_dataset_n(dataset, n, order)
  local len = P.len(dataset, 'split_dataset_n')
  check_int(n, 'split_dataset_n', 'n', 2)
  if n < 1 then error(string.format('split_dataset_n: n must be >= 1 (got %d)', n), 2) end
  local o = order_tensor(order, len, 'split_dataset_n', 2)
  local size = floor(len / n)
  local out = {}
  for i = 0, n - 1 do out[i + 1] = SubDataset(dataset, size * i, size * (i + 1), o) end
  return out
end

function M.split_dataset_n_random(dataset, n, seed)
  local len = P.len(dataset, 'split_dataset_n_random')
  return M.split_dataset_n(dataset, n, random_order(len, seed, 'split_dataset_n_random'))
end

-- get_cross_validation_datasets(dataset, n_folds, [order]) -> Lua array of
-- n_folds pairs {train, test}; test sizes differ by at most one and the
-- test parts together cover the dataset once (Chainer's fold layout).
function M.get_cross_validation_datasets(dataset, n_folds, order)
  local len = P.len(dataset, 'get_cross_validation_datasets')
  check_int(n_folds, 'get_cross_validation_datasets', 'n_folds', 2)
  if n_folds < 1 or n_folds > math.max(len, 1) then
    error(string.format('get_cross_validation_datasets: n_folds must be in 1..%d (got %d)', math.max(len, 1),
      n_folds), 2)
  end
  local o = order_tensor(order, len, 'get_cross_validation_datasets', 2)
  if o == nil then o = T.arange(0, len, 1, 'int64') end
  local test_sizes = {}
  for i = 0, n_folds - 1 do
    test_sizes[i + 1] = floor(len * (i + 1) / n_folds) - floor(len * i / n_folds)
  end
  local splits = {}
  for f = n_folds, 1, -1 do
    local ts = test_sizes[f]
    local a, b = M.split_dataset(dataset, len - ts, o)
    splits[#splits + 1] = { a, b }
    -- rotate: the last ts positions move to the front
    if ts > 0 and ts < len then
      o = T.concatenate({ o:slice({ len - ts, len }), o:slice({ 0, len - ts }) }, 0)
    end
  end
  return splits
end

function M.get_cross_validation_datasets_random(dataset, n_folds, seed)
  local len = P.len(dataset, 'get_cross_validation_datasets_random')
  return M.get_cross_validation_datasets(dataset, n_folds,
    random_order(len, seed, 'get_cross_validation_datasets_random'))
end

return M

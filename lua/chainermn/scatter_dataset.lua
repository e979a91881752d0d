-- chainermn/scatter_dataset.lua: scatter_index and scatter_dataset.
--
-- ChainerMN pickles root's dataset to the other ranks.  Lua datasets (files,
-- closures, C buffers) do not serialise, so here every rank passes its own
-- copy of the same dataset (each rank loads MNIST, say): root decides the
-- order (shuffle, seed) and the split, the others receive the order and
-- their bounds, and every rank checks its dataset has root's length.
local args = require 'chainer._args'
local msg = require 'chainermn._message'
local P = require 'chainer.dataset.protocol'
local rng = require 'chainer.dataset.rng'
local SubDataset = require('chainer.datasets.sub_dataset').SubDataset

local M = {}

-- The half-open ranges [b, e) of each rank, as Chainer's _scatter_index:
-- equal lengths ceil(n / size) (the last shards overlap the previous ones
-- when size does not divide n), or disjoint shards whose lengths differ by
-- at most one.
function M.ranges(n, size, force_equal_length)
  local out = {}
  if force_equal_length then
    local len = math.floor((n + size - 1) / size)
    for i = 0, size - 1 do
      local b = math.floor(n * i / size)
      out[i + 1] = { b, b + len }
    end
  else
    local b, longer = 0, n % size
    for i = 0, size - 1 do
      local len = math.floor(n / size) + (i < longer and 1 or 0)
      out[i + 1] = { b, b + len }
      b = b + len
    end
  end
  return out
end

local function check_comm(comm, fn)
  if type(comm) ~= 'table' or type(comm.bcast_obj) ~= 'function' then
    error(fn .. ': comm must be a chainermn communicator (got ' .. type(comm) .. ')', 3)
  end
end

local INDEX_OPTIONS = args.accept{ 'root', 'force_equal_length' }

-- scatter_index(n, comm, {root = 0, force_equal_length = true}) -> b, e:
-- this rank's half-open range of 0-based example positions.
function M.scatter_index(n, comm, opts)
  local fn = 'scatter_index'
  check_comm(comm, fn)
  opts = args.options(fn, opts, INDEX_OPTIONS)
  local root = msg.check_root(comm, opts.root, fn)
  local equal = opts.force_equal_length ~= false
  local all = comm.rank == root and M.ranges(n, comm.size, equal) or nil
  local mine = comm:bcast_obj(all, root)[comm.rank + 1]
  return mine[1], mine[2]
end

local DATASET_OPTIONS = args.accept{ 'root', 'shuffle', 'seed', 'force_equal_length' }

-- scatter_dataset(ds, comm, {root = 0, shuffle = false, seed = nil,
-- force_equal_length = true}) -> this rank's SubDataset.
function M.scatter_dataset(dataset, comm, opts)
  local fn = 'scatter_dataset'
  check_comm(comm, fn)
  opts = args.options(fn, opts, DATASET_OPTIONS)
  local root = msg.check_root(comm, opts.root, fn)
  local seed = rng.check_seed(opts.seed, fn, 2)
  local n = P.len(dataset, fn)
  -- root's plan: its length, the order (0-based int64 tensor) and the ranges
  local plan
  if comm.rank == root then
    plan = { n = n, ranges = M.ranges(n, comm.size, opts.force_equal_length ~= false) }
    if opts.shuffle then plan.order = rng.permutation(n, seed or rng.fresh_seed()) end
  end
  plan = comm:bcast_obj(plan, root)
  local lengths_agree = comm:allreduce_obj(plan.n == n and 0 or 1) == 0
  if not lengths_agree then
    local all = comm:_allgather_obj(n)
    local parts = {}
    for r = 1, #all do parts[r] = string.format('rank %d: %d', r - 1, all[r]) end
    error(string.format('%s: every rank must pass the same dataset (lengths %s)', fn, table.concat(parts, ', ')), 2)
  end
  local range = plan.ranges[comm.rank + 1]
  return SubDataset(dataset, range[1], range[2], plan.order)
end

return M

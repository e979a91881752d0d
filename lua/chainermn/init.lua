-- chainermn: data-parallel training over MPI processes (ChainerMN's API).
--
--   local chainermn = require 'chainermn'
--   local comm = chainermn.create_communicator('flat')
--   local opt = chainermn.create_multi_node_optimizer(chainer.optimizers.Adam(), comm)
--   local train = chainermn.scatter_dataset(train, comm, {shuffle = true})
--
-- Run with `mpirun -np N chainlua train.lua`; without mpirun a communicator
-- has size 1.  Requiring this module needs no MPI: Open MPI is loaded when
-- the first communicator is created (docs/chainermn.md).
local args = require 'chainer._args'
local Communicator = require 'chainermn.communicator'
require 'chainermn.tensor_collectives'   -- gather, allgather, alltoall, scatter
require 'chainermn.point_to_point'       -- send, recv, send_obj, recv_obj
local model_sync = require 'chainermn.model_sync'
local MultiNodeOptimizer = require 'chainermn.multi_node_optimizer'
local scatter = require 'chainermn.scatter_dataset'

local chainermn = {}

-- Communicator names -> whether they pack a model's arrays into one buffer.
-- All move host memory through MPI ('hierarchical' sums gradients within
-- each node first), and GPU models through CUDA-aware MPI or host staging;
-- 'pure_nccl' moves GPU models through NCCL (chainermn/device_sync.lua).
local HOST_COMMUNICATORS = { naive = false, flat = true, hierarchical = true, pure_nccl = true }
local NOT_BUILT = { two_dimensional = true, single_node = true, non_cuda_aware = true }

-- Models on a GPU go through device_sync (NCCL, CUDA-aware MPI or host
-- staging), the others through model_sync.
local device_sync = require 'chainermn.device_sync'
local function syncer(model) return device_sync.on_device(model) and device_sync or model_sync end

function Communicator:bcast_data(model) syncer(model).bcast_data(self, model) end

-- multi_node_mean_grad(model, zero_fill): zero_fill (default false) makes a
-- missing gradient zeros so it takes part in the mean.
function Communicator:multi_node_mean_grad(model, zero_fill)
  syncer(model).multi_node_mean_grad(self, model, zero_fill)
end
Communicator.allreduce_grad = Communicator.multi_node_mean_grad   -- ChainerMN's older name

local ACCEPTED = args.accept{ 'mpi_comm', 'allreduce_grad_dtype', 'batched_copy' }

-- create_communicator(name, opts): name defaults to 'flat' (ChainerMN's
-- default, 'pure_nccl', needs NCCL and a GPU per process).
-- One communicator object per process is the common case; each call returns
-- a new one over MPI_COMM_WORLD.
function chainermn.create_communicator(name, opts)
  local fn = 'create_communicator'
  name = name or 'flat'
  opts = args.options(fn, opts, ACCEPTED)
  if type(name) ~= 'string' then
    error(fn .. ': the name must be a string (got ' .. type(name) .. ')', 2)
  end
  if opts.mpi_comm ~= nil then error(fn .. ': mpi_comm is not built yet (communicators span MPI_COMM_WORLD)', 2) end
  if opts.allreduce_grad_dtype ~= nil then
    error(fn .. ': allreduce_grad_dtype is not built yet (gradients travel in their own dtype)', 2)
  end
  local pack = HOST_COMMUNICATORS[name]
  if name == 'pure_nccl' then
    local ready, why = device_sync.nccl_ready()
    if not ready then
      error(fn .. ": 'pure_nccl' needs NCCL and CUDA: " .. why .. " (use 'flat', 'naive' or 'hierarchical': " ..
        'MPI, with GPU arrays staged through the host unless Open MPI is CUDA-aware)', 2)
    end
  end
  if pack == nil then
    if NOT_BUILT[name] then
      error(string.format("%s: the '%s' communicator is not built yet (use 'flat', 'naive' or 'hierarchical')", fn,
        name), 2)
    end
    error(string.format("%s: unknown communicator '%s' (expected 'flat', 'naive' or 'hierarchical')", fn, name), 2)
  end
  local ok, comm = pcall(Communicator.new, name, pack)
  if ok and name == 'pure_nccl' then ok, comm = pcall(function() device_sync.attach_nccl(comm) return comm end) end
  if not ok then error(fn .. ': ' .. tostring(comm):gsub('^chainermn: ', ''), 2) end
  return comm
end

-- The class of every communicator create_communicator returns (ChainerMN's
-- abstract base of its communicators): getmetatable(comm) == CommunicatorBase,
-- and a wrapper may derive from it (setmetatable(obj, {__index = CommunicatorBase})).
chainermn.CommunicatorBase = Communicator
-- ChainerMN's chainermn.communicators namespace
chainermn.communicators = {
  CommunicatorBase = Communicator,
  create_communicator = chainermn.create_communicator,
}

chainermn.create_multi_node_optimizer = MultiNodeOptimizer.create
chainermn.scatter_dataset = scatter.scatter_dataset
chainermn.scatter_index = scatter.scatter_index

local evaluator = require 'chainermn.extensions.multi_node_evaluator'
local checkpointer = require 'chainermn.extensions.checkpointer'
local snapshot = require 'chainermn.extensions.multi_node_snapshot'
chainermn.create_multi_node_evaluator = evaluator.create_multi_node_evaluator
chainermn.create_multi_node_checkpointer = checkpointer.create_multi_node_checkpointer
-- ChainerMN's chainermn.extensions namespace
chainermn.extensions = {
  create_multi_node_evaluator = evaluator.create_multi_node_evaluator,
  create_multi_node_checkpointer = checkpointer.create_multi_node_checkpointer,
  multi_node_snapshot = snapshot.multi_node_snapshot,
  AllreducePersistent = require('chainermn.extensions.allreduce_persistent').AllreducePersistent,
  GenericMultiNodeEvaluator = require('chainermn.extensions.generic_multi_node_evaluator').GenericMultiNodeEvaluator,
  ObservationAggregator = require('chainermn.extensions.observation_aggregator').ObservationAggregator,
  MultiNodeEarlyStoppingTrigger =
    require('chainermn.extensions.multi_node_early_stopping_trigger').MultiNodeEarlyStoppingTrigger,
}
chainermn.multi_node_snapshot = snapshot.multi_node_snapshot
-- raised by the collectives whose payload one MPI call cannot move
chainermn.DataSizeError = require('chainermn.errors').DataSizeError

-- chainermn.functions, chainermn.links, chainermn.datasets and
-- chainermn.iterators load on first use (and chainermn.MultiNodeChainList,
-- ChainerMN's top-level name)
local LAZY = { functions = true, links = true, datasets = true, iterators = true }
setmetatable(chainermn, { __index = function(t, k)
  if LAZY[k] then
    local m = require('chainermn.' .. k)
    rawset(t, k, m)
    return m
  elseif k == 'MultiNodeChainList' then
    return t.links.MultiNodeChainList
  end
end })

return chainermn

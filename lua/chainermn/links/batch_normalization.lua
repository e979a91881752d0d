-- chainermn/links/batch_normalization.lua:
-- chainermn.links.MultiNodeBatchNormalization(size, comm, {decay = 0.9,
-- eps = 2e-5, dtype =, use_gamma = true, use_beta = true, initial_gamma =,
-- initial_beta =, communication_backend = 'auto'}).
--
-- L.BatchNormalization whose training-mode statistics are those of every
-- rank's batch together (chainermn/functions/batch_normalization.lua); in
-- test mode it is L.BatchNormalization (the population statistics, which
-- are the same on every rank).  Every rank must call it in the same order.
local args = require 'chainer._args'
local config = require('chainer.config').config
local U = require 'chainer.links._util'
local BatchNormalization = require('chainer.links.normalization.batch_normalization').BatchNormalization
local mnbn = require 'chainermn.functions.batch_normalization'

local MultiNodeBatchNormalization = BatchNormalization:extend('MultiNodeBatchNormalization')

local OPTIONS = args.accept { 'decay', 'eps', 'dtype', 'use_gamma', 'use_beta', 'initial_gamma', 'initial_beta',
  'communication_backend' }
local CALL_OPTIONS = args.accept { 'finetune' }

function MultiNodeBatchNormalization:init(size, comm, opts)
  local fn = 'MultiNodeBatchNormalization'
  if type(size) ~= 'number' and type(size) ~= 'table' then
    error(fn .. ': size must be a number or a shape (got ' .. type(size) .. ')', 3)
  end
  if type(comm) ~= 'table' or type(comm.allreduce) ~= 'function' then
    error(fn .. ': comm must be a chainermn communicator (got ' .. type(comm) .. ')', 3)
  end
  opts = args.options(fn, opts, OPTIONS, 3)
  local backend = opts.communication_backend or 'auto'
  if backend ~= 'auto' and backend ~= 'mpi' then
    error(string.format("%s: communication_backend '%s' is not built (expected 'auto' or 'mpi'; NCCL is not used yet)",
      fn, tostring(backend)), 3)
  end
  rawset(self, 'comm', comm)
  self:_configure(fn, { size = size, decay = opts.decay, eps = opts.eps, dtype = opts.dtype,
    use_gamma = opts.use_gamma, use_beta = opts.use_beta, initial_gamma = opts.initial_gamma,
    initial_beta = opts.initial_beta })
end

-- forward(x, {finetune = false})
function MultiNodeBatchNormalization:forward(x, opts)
  if not config.train then return BatchNormalization.forward(self, x, opts) end
  if U.data(x) == nil then error('MultiNodeBatchNormalization: x must be a tensor or a Variable', 2) end
  if opts ~= nil then args.options('MultiNodeBatchNormalization', opts, CALL_OPTIONS) end
  local gamma, beta = self:_gamma_beta()
  return mnbn.multi_node_batch_normalization(x, gamma, beta, rawget(self, 'comm'), { eps = self.eps,
    running_mean = self.avg_mean, running_var = self.avg_var, decay = self:_decay(opts) })
end

return { MultiNodeBatchNormalization = MultiNodeBatchNormalization }

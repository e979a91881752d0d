-- chainermn/functions/batch_normalization.lua:
-- multi_node_batch_normalization(x, gamma, beta, comm, {eps = 2e-5,
-- running_mean =, running_var =, decay = 0.9, axis = nil}).
--
-- Batch normalization whose statistics are those of the batches of every
-- rank together (ChainerMN's MultiNodeBatchNormalizationFunction): each
-- rank computes its per-channel mean and mean of squares, the ranks average
-- them in one allreduce, and the backward pass averages the per-channel
-- sums of gy and gy * x_hat the same way.  With equal batch sizes the
-- result is batch normalization over the concatenated batch.  Every rank
-- must call it (and its backward) in the same order.  No double backprop.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local N = require 'chainer.functions.normalization._util'
local BN = require 'chainer.functions.normalization.batch_normalization'

local M = {}

local MNBN = FunctionNode:extend('MultiNodeBatchNormalization')
M.MultiNodeBatchNormalization = MNBN

-- The mean over the ranks of the per-channel vectors a and b (one message).
local function mean_over_ranks(comm, a, b)
  local C = a.size
  local both = comm:allreduce(T.concatenate({ a, b })) / comm.size
  return both:slice({ 0, C }), both:slice({ C, 2 * C })
end

local function per_channel(L, v) return v:reshape({ 1, L.C, 1 }) end

function MNBN:forward(inputs)
  local L, comm = self.L, self.comm
  local x3 = N.to3(L, inputs[1])
  local gamma, beta = inputs[2]:reshape({ L.C }), inputs[3]:reshape({ L.C })
  local mean, sqmean = mean_over_ranks(comm, x3:mean({ 0, 2 }), (x3 * x3):mean({ 0, 2 }))
  local var = sqmean - mean * mean
  local inv_std = 1 / (var + self.eps):sqrt()
  local x_hat = (x3 - per_channel(L, mean)) * per_channel(L, inv_std)
  self.mean, self.var, self.inv_std, self.x_hat, self.gamma = mean, var, inv_std, x_hat, gamma
  return { N.from3(L, x_hat * per_channel(L, gamma) + per_channel(L, beta)) }
end

function MNBN:backward(_, gys)
  local L = self.L
  local gy3 = gys[1] and N.to3(L, gys[1].array) or T.zeros(L.shape3, self.x_hat.dtype)
  local gbeta, ggamma = mean_over_ranks(self.comm, gy3:sum({ 0, 2 }), (gy3 * self.x_hat):sum({ 0, 2 }))
  -- the means over ranks of the sums, over this rank's L.m cells: the
  -- whole batch's sums divided by comm.size, hence / L.m and not / (L.m * size)
  local gx3 = per_channel(L, self.gamma * self.inv_std) *
    (gy3 - (self.x_hat * per_channel(L, ggamma) + per_channel(L, gbeta)) / L.m)
  return { Variable.new_var(N.from3(L, gx3), false), Variable.new_var(ggamma:reshape(L.gshape), false),
    Variable.new_var(gbeta:reshape(L.gshape), false) }
end

local OPTIONS = args.accept { 'eps', 'running_mean', 'running_var', 'decay', 'axis' }

function M.multi_node_batch_normalization(x, gamma, beta, comm, opts)
  local fn = 'multi_node_batch_normalization'
  local xd = args.float_array(fn, 'x', x, 2)
  if type(comm) ~= 'table' or type(comm.allreduce) ~= 'function' then
    error(fn .. ': comm must be a chainermn communicator (got ' .. type(comm) .. ')', 2)
  end
  if xd.dtype == 'float16' then error(fn .. ': float16 is not supported (use float32 or float64)', 2) end
  opts = args.options(fn, opts, OPTIONS)
  local L = N.layout(fn, xd.shape, opts.axis, 2)
  BN._check_param(fn, 'gamma', gamma, L, xd, 2)
  BN._check_param(fn, 'beta', beta, L, xd, 2)
  local eps = BN._number_opt(fn, 'eps', opts.eps, 2e-5, 2)
  local decay = BN._number_opt(fn, 'decay', opts.decay, 0.9, 2)
  local f = setmetatable({}, MNBN)
  f.L, f.eps, f.comm = L, eps, comm
  local y = f:apply({ x, gamma, beta })[1]
  local rm, rv = opts.running_mean, opts.running_var
  if rm or rv then
    -- updated outside the node: a static graph keeps running this define-by-run
    require('chainer.graph_optimizations.trace').refuse('multi-node batch normalization updates running statistics outside its node')
  end
  if rm then rm:copy_(rm * decay + f.mean:reshape(L.gshape) * (1 - decay)) end
  if rv then
    -- the unbiased variance of all the ranks' cells together
    local m = L.m * comm.size
    rv:copy_(rv * decay + f.var:reshape(L.gshape) * ((1 - decay) * m / math.max(m - 1, 1)))
  end
  return y
end

return M

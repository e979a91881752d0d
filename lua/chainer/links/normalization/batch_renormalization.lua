-- links/normalization/batch_renormalization.lua: L.BatchRenormalization(size,
--   rmax = 1, dmax = 0, decay = 0.9, eps = 2e-5, dtype, use_gamma, use_beta,
--   initial_gamma, initial_beta, initial_avg_mean, initial_avg_var,
--   update_statistics = true)
-- BatchNormalization whose training forward corrects the batch statistics
-- towards the running averages (r clipped to [1/rmax, rmax], d to
-- [-dmax, dmax]); forward(x, {finetune = false}).
local F = require 'chainer.functions'
local config = require('chainer.config').config
local BatchNormalization = require('chainer.links.normalization.batch_normalization').BatchNormalization
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local BatchRenormalization = BatchNormalization:extend('BatchRenormalization')
local SIGNATURE = args.signature { 'size', 'rmax', 'dmax', 'decay', 'eps', 'dtype', 'use_gamma', 'use_beta',
  'initial_gamma', 'initial_beta', 'initial_avg_mean', 'initial_avg_var', 'update_statistics' }
local CALL_OPTIONS = args.accept { 'finetune' }

function BatchRenormalization:init(...)
  local a = args.parse('L.BatchRenormalization', SIGNATURE, select('#', ...), ...)
  self:_configure('BatchRenormalization', a)
  self.rmax = a.rmax or 1
  self.dmax = a.dmax or 0
  self.update_statistics = a.update_statistics ~= false
end

function BatchRenormalization:forward(x, opts)
  local xd = U.data(x)
  if opts ~= nil then args.options('L.BatchRenormalization', opts, CALL_OPTIONS) end
  if self.avg_mean == nil then self:_initialize_params(self:_param_shape(xd)) end
  local gamma, beta = self:_gamma_beta()
  if config.train then
    return F.batch_renormalization(x, gamma, beta, self.rmax, self.dmax, { eps = self.eps,
      running_mean = self.avg_mean, running_var = self.avg_var, decay = self:_decay(opts),
      update_statistics = self.update_statistics })
  end
  return F.fixed_batch_normalization(x, gamma, beta, self.avg_mean, self.avg_var, { eps = self.eps })
end

return { BatchRenormalization = BatchRenormalization }

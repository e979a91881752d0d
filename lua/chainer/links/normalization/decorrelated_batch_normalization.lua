-- links/normalization/decorrelated_batch_normalization.lua:
-- L.DecorrelatedBatchNormalization(size, groups = 16, decay = 0.9, eps = 2e-5,
--   dtype = 'float32')
--
-- No parameters.  Persistent avg_mean (groups, size / groups) zeros,
-- avg_projection (groups, C, C) identities and N (0), in `dtype` (float32
-- unless given, as Chainer's, not chainer.config.dtype).  In training mode
-- F.decorrelated_batch_normalization whitens x with its batch statistics
-- and updates the running averages in place; with chainer.config.train ==
-- false, F.fixed_decorrelated_batch_normalization uses them.
-- forward(x, {finetune = false}): finetune averages over the calls since
-- start_finetuning() (decay 1 - 1/N).
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local config = require('chainer.config').config
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local DecorrelatedBatchNormalization = Link:extend('DecorrelatedBatchNormalization')
local NAME = 'L.DecorrelatedBatchNormalization'
local SIGNATURE = args.signature { 'size', 'groups', 'decay', 'eps', 'dtype' }
local CALL_OPTIONS = args.accept { 'finetune' }

function DecorrelatedBatchNormalization:init(...)
  local a = args.parse(NAME, SIGNATURE, select('#', ...), ...)
  local size, groups = a.size, a.groups == nil and 16 or a.groups
  U.check_size(NAME, 'size', size)
  U.check_size(NAME, 'groups', groups)
  if size % groups ~= 0 then
    error(string.format('%s: size (%d) must be a multiple of groups (%d)', NAME, size, groups), 3)
  end
  local dtype = T.dtype_name(a.dtype or 'float32')
  if not T.is_float_dtype(dtype) then error(NAME .. ': dtype must be a float dtype (got ' .. dtype .. ')', 3) end
  local C = size / groups
  self.groups = groups
  self.decay = a.decay == nil and 0.9 or a.decay
  self.eps = a.eps == nil and 2e-5 or a.eps
  self:add_persistent('avg_mean', T.zeros({ groups, C }, dtype))
  self:add_persistent('avg_projection', T.eye(C, dtype):reshape({ 1, C, C }):broadcast_to({ groups, C, C }):copy())
  self:add_persistent('N', 0)
end

function DecorrelatedBatchNormalization:printable_specs()
  return { { 'size', self.avg_mean.shape[1] * self.avg_mean.shape[2] }, { 'groups', self.groups },
    { 'decay', self.decay }, { 'eps', self.eps } }
end

function DecorrelatedBatchNormalization:forward(x, opts)
  opts = args.options(NAME, opts, CALL_OPTIONS)
  if config.train then
    local decay = self.decay
    if opts.finetune then
      rawset(self, 'N', self.N + 1)
      decay = 1 - 1 / self.N
    end
    return F.decorrelated_batch_normalization(x, { groups = self.groups, eps = self.eps,
      running_mean = self.avg_mean, running_projection = self.avg_projection, decay = decay })
  end
  return F.fixed_decorrelated_batch_normalization(x, self.avg_mean, self.avg_projection, self.groups)
end

-- Resets the population statistics counter for fine-tuning.
function DecorrelatedBatchNormalization:start_finetuning() rawset(self, 'N', 0) end

return { DecorrelatedBatchNormalization = DecorrelatedBatchNormalization }

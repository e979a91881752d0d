-- links/normalization/batch_normalization.lua: L.BatchNormalization.
--
-- L.BatchNormalization(size, decay = 0.9, eps = 2e-5, dtype, use_gamma, use_beta,
--   initial_gamma, initial_beta, axis, initial_avg_mean, initial_avg_var)
-- Parameters gamma (ones) and beta (zeros); persistent avg_mean (zeros),
-- avg_var (ones) and N (0).  In training mode the batch statistics are used
-- and the running averages updated in place (r = decay*r + (1-decay)*batch,
-- unbiased variance); with chainer.config.train == false the running
-- averages are used.  size = nil infers the shape at the first call.
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local config = require('chainer.config').config
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local BatchNormalization = Link:extend('BatchNormalization')
local SIGNATURE = args.signature { 'size', 'decay', 'eps', 'dtype', 'use_gamma', 'use_beta', 'initial_gamma',
  'initial_beta', 'axis', 'initial_avg_mean', 'initial_avg_var' }
local CALL_OPTIONS = args.accept { 'finetune' }

-- The constructor shared with BatchRenormalization (a: Chainer's arguments).
function BatchNormalization:_configure(fn, a)
  self.decay = a.decay or 0.9
  self.eps = a.eps or 2e-5
  self.axis = a.axis
  -- Chainer's: float32 under mixed16 (get_dtype(dtype, map_mixed16 = float32))
  self._dtype = require('chainer.config').get_dtype(a.dtype, 'float32')
  self._initial_avg_mean = a.initial_avg_mean
  self._initial_avg_var = a.initial_avg_var
  self:add_persistent('avg_mean', nil)
  self:add_persistent('avg_var', nil)
  self:add_persistent('N', 0)
  if a.use_gamma ~= false then
    local gi = a.initial_gamma
    if gi == nil then gi = 1 end
    self.gamma = U.param(I._get_initializer(gi, fn))
    rawset(self.gamma.initializer, 'dtype', rawget(self.gamma.initializer, 'dtype') or self._dtype)
  end
  if a.use_beta ~= false then
    local bi = a.initial_beta
    if bi == nil then bi = 0 end
    self.beta = U.param(I._get_initializer(bi, fn))
    rawset(self.beta.initializer, 'dtype', rawget(self.beta.initializer, 'dtype') or self._dtype)
  end
  if a.size ~= nil then self:_initialize_params(type(a.size) == 'number' and { a.size } or a.size) end
end

function BatchNormalization:init(...)
  local a = args.parse('L.BatchNormalization', SIGNATURE, select('#', ...), ...)
  self:_configure('BatchNormalization', a)
end

function BatchNormalization:_initialize_params(shape)
  local dtype = self._dtype
  local dev = rawget(self, '_device')
  local function init_arr(v, default)
    if v == nil then return T.full(shape, default, dtype, dev) end
    local t = T.is_tensor(v) and v or T.array(v)
    return T.empty(shape, dtype, dev):copy_(t:astype(dtype):broadcast_to(shape):to_device(dev))
  end
  rawset(self, 'avg_mean', init_arr(self._initial_avg_mean, 0))
  rawset(self, 'avg_var', init_arr(self._initial_avg_var, 1))
  if self.gamma then self.gamma:initialize(shape) end
  if self.beta then self.beta:initialize(shape) end
end

function BatchNormalization:printable_specs()
  local s = self.avg_mean and self.avg_mean.shape or nil
  return { { 'size', s and (#s == 1 and s[1] or s) or nil }, { 'decay', self.decay }, { 'eps', self.eps } }
end

-- The parameter shape for x: x's shape without the reduced axes.
function BatchNormalization:_param_shape(xd)
  local axis = self.axis
  local shape = xd.shape
  local skip = {}
  if axis == nil then
    skip[0] = true
    for i = 3, #shape do skip[i - 1] = true end
  else
    if type(axis) == 'number' then axis = { axis } end
    for _, ax in ipairs(axis) do skip[ax < 0 and ax + #shape or ax] = true end
  end
  local out = {}
  for i = 1, #shape do if not skip[i - 1] then out[#out + 1] = shape[i] end end
  return out
end

-- gamma and beta, or ones and zeros for those the link does not learn.
function BatchNormalization:_gamma_beta()
  local gamma, beta = self.gamma, self.beta
  if gamma == nil then gamma = T.ones(self.avg_mean.shape, self.avg_mean.dtype, self.avg_mean.ptr.dev) end
  if beta == nil then beta = T.zeros(self.avg_mean.shape, self.avg_mean.dtype, self.avg_mean.ptr.dev) end
  return gamma, beta
end

-- The running averages' decay of a training forward: with finetune, the
-- cumulative average over the N calls since start_finetuning().
function BatchNormalization:_decay(opts)
  if opts and opts.finetune then
    rawset(self, 'N', self.N + 1)
    return 1 - 1 / self.N
  end
  return self.decay
end

-- forward(x, {finetune = false})
function BatchNormalization:forward(x, opts)
  local xd = U.data(x)
  if xd == nil then error('BatchNormalization: x must be a tensor or a Variable', 2) end
  if opts ~= nil then args.options('L.BatchNormalization', opts, CALL_OPTIONS) end
  if self.avg_mean == nil then self:_initialize_params(self:_param_shape(xd)) end
  local gamma, beta = self:_gamma_beta()
  local axis = self.axis
  if config.train then
    return F.batch_normalization(x, gamma, beta, { eps = self.eps, running_mean = self.avg_mean,
      running_var = self.avg_var, decay = self:_decay(opts), axis = axis })
  end
  return F.fixed_batch_normalization(x, gamma, beta, self.avg_mean, self.avg_var, { eps = self.eps, axis = axis })
end

-- Resets the population statistics counter for fine-tuning.
function BatchNormalization:start_finetuning() rawset(self, 'N', 0) end

return { BatchNormalization = BatchNormalization }

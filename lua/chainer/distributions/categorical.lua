-- distributions/categorical.lua: Categorical(p) or Categorical(nil,
-- {logit = l}) over the last axis of p (batch_shape is p's shape without it).
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local Variable = require 'chainer.variable'
local base = require 'chainer.distributions.distribution'
local samplers = require 'chainer.distributions._samplers'
local H = base.helpers

local Categorical = base.Distribution:extend('Categorical')

local OPTIONS = args.accept { 'logit', 'validate_args' }

function Categorical:init(p, opts)
  local fn = 'Categorical'
  local validate
  opts, validate = H.options(fn, opts, OPTIONS)
  if (p == nil) == (opts.logit == nil) then args.fail('Categorical: give either p or logit (not both)', 2) end
  local v = H.param(fn, p ~= nil and 'p' or 'logit', p ~= nil and p or opts.logit)
  if #v.shape == 0 then
    args.fail('Categorical: ' .. (p ~= nil and 'p' or 'logit') .. ' needs at least one axis (the categories)', 2)
  end
  if p ~= nil then
    if validate then H.simplex(fn, 'p', v) end
    self.p = v
  else
    self._logit = v
  end
end

function Categorical:_get_p() return F.exp(self.log_p) end
function Categorical:_get_log_p()
  if self._logit ~= nil then return F.log_softmax(self._logit, { axis = -1 }) end
  return F.log(self.p)
end
function Categorical:_get_batch_shape() return H.leading_shape(self.p.shape) end
function Categorical:_get_entropy() return -F.sum(H.xlogx(self.p), { axis = -1 }) end
function Categorical:_get_params() return { p = self.p } end
function Categorical:_get_support() return '{0, 1, ..., K-1}' end

-- log p(x) for integer categories x of shape (sample..., batch...).
function Categorical:log_prob(x)
  local labels = H.data(x)
  if not T.is_tensor(labels) then args.fail('Categorical:log_prob: x must be a Variable or a tensor of categories', 2) end
  local k = self.p.shape[#self.p.shape]
  local shape = {}
  for i, s in ipairs(labels.shape) do shape[i] = s end
  shape[#shape + 1] = k
  local log_p = self.log_p
  if T.shape_str(log_p.shape) ~= T.shape_str(shape) then log_p = F.broadcast_to(log_p, shape) end
  local flat = F.reshape(log_p, { -1, k })
  local picked = F.select_item(flat, labels:astype('int32'):reshape({ -1 }))
  return F.reshape(picked, labels.shape)
end

-- int64 draws, as NumPy's choice.
function Categorical:sample_n(n)
  return Variable(samplers.categorical(self.p.array, n))
end

base.register_kl(Categorical, Categorical, function(p, q)
  local positive = T.gt(p.p.array, 0)
  local terms = H.where_const(positive, p.p * (p.log_p - q.log_p), 0)
  return F.sum(terms, { axis = -1 })
end)

return Categorical

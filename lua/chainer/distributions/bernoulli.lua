-- distributions/bernoulli.lua: Bernoulli(p) or Bernoulli(nil, logit), with
-- Chainer's binary_check (log_prob is -inf and prob 0 off {0, 1}).
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local base = require 'chainer.distributions.distribution'
local H = base.helpers

local Bernoulli = base.Distribution:extend('Bernoulli')

local SIGNATURE = args.signature({ 'p', 'logit', 'binary_check' }, { 'validate_args' })

function Bernoulli:init(...)
  local fn = 'Bernoulli'
  local a = args.parse_at(3, fn, SIGNATURE, select('#', ...), ...)
  if (a.p == nil) == (a.logit == nil) then args.fail('Bernoulli: give either p or logit (not both)', 2) end
  if a.binary_check ~= nil and type(a.binary_check) ~= 'boolean' then
    args.fail(string.format('Bernoulli: binary_check must be a boolean (got %s)', type(a.binary_check)), 2)
  end
  if a.validate_args ~= nil and type(a.validate_args) ~= 'boolean' then
    args.fail(string.format('Bernoulli: validate_args must be a boolean (got %s)', type(a.validate_args)), 2)
  end
  self.binary_check = a.binary_check == true
  if a.p ~= nil then
    self.p = H.param(fn, 'p', a.p)
    if a.validate_args ~= false then H.in_unit(fn, 'p', self.p) end
  else
    self.logit = H.param(fn, 'logit', a.logit)
  end
end

function Bernoulli:_get_p() return F.sigmoid(self.logit) end
function Bernoulli:_get_logit() return F.log(self.p) - F.log1p(-self.p) end
function Bernoulli:_get_batch_shape() return self.p.shape end
function Bernoulli:_get_mean() return self.p end
function Bernoulli:_get_variance() return self.p * (1 - self.p) end
function Bernoulli:_get_entropy() return -H.xlogx(self.p) - H.xlogx(1 - self.p) end
function Bernoulli:_get_params() return { logit = self.logit } end
function Bernoulli:_get_support() return '{0, 1}' end

local function is_binary(x)
  local d = H.data(x)
  return T.logical_or(T.eq(d, 0), T.eq(d, 1))
end

-- log p(x) = x logit - log(1 + e^logit)
function Bernoulli:log_prob(x)
  local y = x * self.logit - F.softplus(self.logit)
  if self.binary_check then y = H.where_const(is_binary(x), y, -math.huge) end
  return y
end

function Bernoulli:prob(x)
  local y = x * self.p + (1 - x) * (1 - self.p)
  if self.binary_check then y = H.where_const(is_binary(x), y, 0) end
  return y
end

-- Draws are 0 or 1 in p's dtype (not differentiable).
function Bernoulli:sample_n(n)
  local p = self.p.array
  local u = T.random.uniform(0, 1, H.sample_shape(n, p), p.dtype, p.device)
  return require('chainer.variable')(T.lt(u, p):astype(p.dtype))
end

base.register_kl(Bernoulli, Bernoulli, function(p, q)
  return (p.logit - q.logit) * (p.p - 1) - F.softplus(-p.logit) + F.softplus(-q.logit)
end)

return Bernoulli

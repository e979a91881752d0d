-- distributions/independent.lua: Independent(distribution,
-- reinterpreted_batch_ndims) treats the last batch axes of a distribution as
-- event axes: log_prob and entropy sum over them, prob and cdf multiply.
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local class = require 'chainer.class'
local base = require 'chainer.distributions.distribution'

local Independent = base.Distribution:extend('Independent')

local SIGNATURE = args.signature({ 'distribution', 'reinterpreted_batch_ndims' })

function Independent:init(...)
  local fn = 'Independent'
  local a = args.parse_at(3, fn, SIGNATURE, select('#', ...), ...)
  local d = a.distribution
  if not class.isinstance(d, base.Distribution) then
    args.fail(string.format('Independent: distribution must be a Distribution (got %s)', type(d)), 2)
  end
  local batch = d.batch_shape
  local r = a.reinterpreted_batch_ndims
  if r == nil then
    r = math.max(0, #batch - 1)
  elseif type(r) ~= 'number' or r % 1 ~= 0 or r < 0 then
    args.fail(string.format('Independent: reinterpreted_batch_ndims must be a non-negative integer (got %s)',
      tostring(r)), 2)
  elseif r > #batch then
    args.fail(string.format('Independent: reinterpreted_batch_ndims (%d) must be at most the number of batch axes '
      .. 'of the distribution (%d)', r, #batch), 2)
  end
  self.distribution = d
  self.reinterpreted_batch_ndims = r
  local keep = #batch - r
  local b, e = {}, {}
  for i = 1, keep do b[i] = batch[i] end
  for i = keep + 1, #batch do e[#e + 1] = batch[i] end
  for _, s in ipairs(d.event_shape) do e[#e + 1] = s end
  self.batch_shape, self.event_shape = b, e
end

-- reduces the last r axes of a per-base-batch statistic
local function reduce(self, op, stat)
  local r = self.reinterpreted_batch_ndims
  if r == 0 then return stat end
  local axes = {}
  for i = 1, r do axes[i] = -i end
  return op(stat, { axis = axes })
end

function Independent:_get_mean() return self.distribution.mean end
function Independent:_get_mode() return self.distribution.mode end
function Independent:_get_variance() return self.distribution.variance end
function Independent:_get_stddev() return self.distribution.stddev end
function Independent:_get_params() return self.distribution.params end
function Independent:_get_support() return self.distribution.support end
function Independent:_get_entropy() return reduce(self, F.sum, self.distribution.entropy) end

-- The base's covariance blocks on the diagonal of a (n dim) x (n dim)
-- matrix, n the size of the reinterpreted axes and dim the base event size.
function Independent:_get_covariance()
  local d, r = self.distribution, self.reinterpreted_batch_ndims
  local n, dim = 1, 1
  for i = #d.batch_shape - r + 1, #d.batch_shape do n = n * d.batch_shape[i] end
  for _, s in ipairs(d.event_shape) do dim = dim * s end
  local cov = d.covariance
  local lead = {}
  for i, s in ipairs(self.batch_shape) do lead[i] = s end
  local blocks = { unpack(lead) }
  for _, s in ipairs({ n, dim, 1, dim }) do blocks[#blocks + 1] = s end
  local cov5 = F.reshape(cov, blocks)
  local out = { unpack(lead) }
  for _, s in ipairs({ n, dim, n, dim }) do out[#out + 1] = s end
  local eye = T.eye(n, cov.dtype):reshape({ n, 1, n, 1 })
  local full = F.broadcast_to(cov5, out) * eye
  local final = { unpack(lead) }
  final[#final + 1] = n * dim
  final[#final + 1] = n * dim
  return F.reshape(full, final)
end

function Independent:log_prob(x) return reduce(self, F.sum, self.distribution:log_prob(x)) end
function Independent:prob(x) return reduce(self, F.prod, self.distribution:prob(x)) end
function Independent:cdf(x) return reduce(self, F.prod, self.distribution:cdf(x)) end
function Independent:log_cdf(x) return reduce(self, F.sum, self.distribution:log_cdf(x)) end
function Independent:survival_function(x) return reduce(self, F.prod, self.distribution:survival_function(x)) end
function Independent:log_survival_function(x)
  return reduce(self, F.sum, self.distribution:log_survival_function(x))
end
function Independent:perplexity(x) return reduce(self, F.prod, self.distribution:perplexity(x)) end
function Independent:icdf()
  args.fail('Independent:icdf: the cumulative distribution function of a multivariate variable is not invertible', 2)
end
function Independent:sample_n(n) return self.distribution:sample_n(n) end

-- KL of factored distributions: the base KL summed over the reinterpreted axes.
base.register_kl(Independent, Independent, function(p, q)
  if T.shape_str(p.event_shape) ~= T.shape_str(q.event_shape) then
    args.fail(string.format('kl_divergence: the event shapes of the Independents differ (%s and %s)',
      T.shape_str(p.event_shape), T.shape_str(q.event_shape)), 3)
  end
  local bp, bq = p.distribution, q.distribution
  if T.shape_str(bp.event_shape) ~= T.shape_str(bq.event_shape) then
    args.fail('kl_divergence: Independents over distributions of different event shapes are not supported', 3)
  end
  local kl = base.kl_divergence(bp, bq)
  local n = #p.event_shape - #bp.event_shape
  if n == 0 then return kl end
  local axes = {}
  for i = 1, n do axes[i] = -i end
  return F.sum(kl, { axis = axes })
end)

return Independent

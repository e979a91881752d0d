-- distributions/one_hot_categorical.lua: OneHotCategorical(p), a
-- categorical distribution whose outcomes are one-hot vectors over p's last
-- axis (event_shape {K}).
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local base = require 'chainer.distributions.distribution'
local parametric = require 'chainer.distributions._parametric'
local samplers = require 'chainer.distributions._samplers'
local H = base.helpers

local OneHotCategorical = parametric('OneHotCategorical', { { 'p', H.simplex } }, { event = 'the categories' })

function OneHotCategorical:_get_log_p() return F.log(self.p) end
function OneHotCategorical:_get_mean() return self.p end
function OneHotCategorical:_get_variance() return self.p * (1 - self.p) end
function OneHotCategorical:_get_entropy() return -F.sum(H.xlogx(self.p), { axis = -1 }) end

-- log p(x) = sum_k x_k log p_k; terms with x_k = 0 add nothing even where p_k = 0
function OneHotCategorical:log_prob(x)
  local d = H.data(x)
  local shape = T.shape_str(d.shape) == T.shape_str(self.p.shape) and self.p.shape or nil
  local log_p = self.log_p
  if shape == nil then log_p = F.broadcast_to(log_p, d.shape) end
  local chosen = T.ne(d, 0)
  return F.sum(H.where_const(chosen, log_p * x, 0), { axis = -1 })
end

-- One-hot draws in p's dtype.
function OneHotCategorical:sample_n(n)
  local p = self.p.array
  local k = p.shape[#p.shape]
  local idx = samplers.categorical(p, n)
  local shape = {}
  for i, s in ipairs(idx.shape) do shape[i] = s end
  shape[#shape + 1] = 1
  return Variable(T.eq(idx:reshape(shape), T.arange(k, 'int64')):astype(p.dtype))
end

base.register_kl(OneHotCategorical, OneHotCategorical, function(p, q)
  local terms = H.where_const(T.gt(p.p.array, 0), p.p * (p.log_p - q.log_p), 0)
  return F.sum(terms, { axis = -1 })
end)

return OneHotCategorical

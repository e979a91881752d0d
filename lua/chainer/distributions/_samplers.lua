-- distributions/_samplers.lua: exact samplers the tensor library lacks
-- (gamma and Poisson), vectorised as rejection loops over whole tensors:
-- every round draws candidates for all elements and keeps them where an
-- element is still waiting and its candidate is accepted.  Draws come from
-- T.random, so T.random.seed makes them reproducible.
local T = require 'chainer.tensor'

local M = {}

local MAX_ROUNDS = 1000   -- each round accepts >= 90% of what is left

local function rounds_exhausted(name)
  error(name .. ': the rejection sampler did not finish (a parameter is NaN or out of range?)', 3)
end

-- Gamma(alpha, 1) of the given shape (alpha broadcasts to it), by Marsaglia
-- and Tsang's method; alpha < 1 uses Gamma(alpha + 1) * u^(1 / alpha).
function M.gamma(alpha, shape)
  local dt, dev = alpha.dtype, alpha.device
  local a64 = alpha:astype('float64')
  local small = T.lt(a64, 1)
  local boosted = T.where(small, a64 + 1, a64)
  local d = boosted - 1 / 3
  local c = 1 / T.sqrt(d * 9)
  local out = T.zeros(shape, 'float64', dev)
  local done = T.zeros(shape, 'bool', dev)
  for _ = 1, MAX_ROUNDS do
    local x = T.random.normal(0, 1, shape, 'float64', dev)
    local u = T.random.uniform(0, 1, shape, 'float64', dev)
    local v = (x * c + 1)
    v = v * v * v
    local accept = T.logical_and(T.gt(v, 0),
      T.lt(T.log(u), x * x * 0.5 + d - d * v + d * T.log(T.where(T.gt(v, 0), v, 1))))
    accept = T.logical_and(accept, T.logical_not(done))
    out = T.where(accept, d * v, out)
    done = T.logical_or(done, accept)
    if T.all(done):item() then
      -- alpha < 1: scale by u^(1/alpha), in logs (u^(1/alpha) underflows for tiny alpha)
      local u2 = T.random.uniform(0, 1, shape, 'float64', dev)
      local scale = T.where(small, T.exp(T.log(1 - u2) / a64), 1)
      return (out * scale):astype(dt)
    end
  end
  rounds_exhausted('gamma sampler')
end

-- Poisson(lam) of the given shape: inversion (sequential search) below 10,
-- Hörmann's transformed rejection (PTRS) from 10 on.
function M.poisson(lam, shape)
  local dt, dev = lam.dtype, lam.device
  local l64 = lam:astype('float64')
  local big = T.ge(T.zeros(shape, 'float64', dev) + l64, 10)

  -- inversion: count how many cumulative probabilities stay below u
  local ls = T.where(T.lt(l64, 10), l64, 1)
  local u = T.random.uniform(0, 1, shape, 'float64', dev)
  local k = T.zeros(shape, 'float64', dev)
  local p = T.exp(-ls) + T.zeros(shape, 'float64', dev)
  local cdf = p
  for i = 1, 200 do
    local more = T.gt(u, cdf)
    if not T.any(more):item() then break end
    k = k + more:astype('float64')
    p = p * ls / i
    cdf = cdf + p
  end

  if T.any(big):item() then
    local lb = T.where(T.ge(l64, 10), l64, 10)
    local slam, loglam = T.sqrt(lb), T.log(lb)
    local b = slam * 2.53 + 0.931
    local a = b * 0.02483 - 0.059
    local log_inv_alpha = T.log(1.1239 + 1.1328 / (b - 3.4))
    local vr = 0.9277 - 3.6224 / (b - 2)
    local out = T.zeros(shape, 'float64', dev)
    local done = T.logical_not(big)
    for _ = 1, MAX_ROUNDS do
      local uu = T.random.uniform(0, 1, shape, 'float64', dev) - 0.5
      local v = T.random.uniform(0, 1, shape, 'float64', dev)
      local us = 0.5 - T.abs(uu)
      local kk = T.floor((a * 2 / us + b) * uu + lb + 0.43)
      local quick = T.logical_and(T.ge(us, 0.07), T.le(v, vr))
      local bad = T.logical_or(T.lt(kk, 0), T.logical_and(T.lt(us, 0.013), T.gt(v, us)))
      local safe_k = T.where(T.lt(kk, 0), 0, kk)
      local slow = T.le(T.log(v) + log_inv_alpha - T.log(a / (us * us) + b),
        -lb + safe_k * loglam - T.lgamma(safe_k + 1))
      local accept = T.logical_or(quick, T.logical_and(T.logical_not(bad), slow))
      accept = T.logical_and(accept, T.logical_not(done))
      out = T.where(accept, kk, out)
      done = T.logical_or(done, accept)
      if T.all(done):item() then
        k = T.where(big, out, k)
        return k:astype(dt)
      end
    end
    rounds_exhausted('poisson sampler')
  end
  return k:astype(dt)
end

-- n draws of category indices (int64, shape {n, batch...}) from
-- probabilities p over p's last axis: the category is the number of
-- cumulative probabilities below a uniform number.
function M.categorical(p, n)
  local k = p.shape[#p.shape]
  local shape, ushape = { n }, { n }
  for i = 1, #p.shape - 1 do
    shape[#shape + 1] = p.shape[i]
    ushape[#ushape + 1] = p.shape[i]
  end
  ushape[#ushape + 1] = 1
  local u = T.random.uniform(0, 1, shape, p.dtype, p.device)
  local below = T.lt(T.cumsum(p, -1), u:reshape(ushape)):astype('int64')
  return T.minimum(T.sum(below, { axis = -1 }), k - 1)
end

return M

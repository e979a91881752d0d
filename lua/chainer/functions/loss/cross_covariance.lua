-- functions/loss/cross_covariance.lua:
--   F.cross_covariance(y, z, {reduce = 'half_squared_sum'})
-- y (N, M), z (N, K): C = (y - mean y)^T (z - mean z) / N, (M, K).
-- 'half_squared_sum' returns sum(C^2) / 2, 'no' returns C.  Composed of
-- FunctionNodes; double backprop works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'

local M = {}

local SIGNATURE = args.signature { 'reduce' }

-- x minus its mean over axis 0, differentiably.
local function centered(x, n, m)
  local mu = U.F('sum')(x, { axis = 0 }) * (1 / n)
  return x - U.F('broadcast_to')(U.F('reshape')(mu, { 1, m }), { n, m })
end
M._centered = centered

function M.cross_covariance(y, z, opts)
  local fn = 'cross_covariance'
  local yd, zd = args.float_array(fn, 'y', y), args.array(fn, 'z', z)
  checks.ndim(fn, 'y', yd, 2)
  checks.ndim(fn, 'z', zd, 2)
  if yd.dtype ~= zd.dtype then
    error(string.format('%s: y and z must have the same dtype (got %s and %s)', fn, yd.dtype, zd.dtype), 2)
  end
  if yd.shape[1] ~= zd.shape[1] then
    error(string.format('%s: y and z must have the same number of rows (got %s and %s)', fn,
      T.shape_str(yd.shape), T.shape_str(zd.shape)), 2)
  end
  local o = args.parse(fn, SIGNATURE, 1, opts)
  local red = checks.reduce(fn, o.reduce, 'half_squared_sum', { 'half_squared_sum', 'no' })
  local n = yd.shape[1]
  local yc, zc = centered(y, n, yd.shape[2]), centered(z, n, zd.shape[2])
  local cov = U.F('matmul')(yc, zc, { transa = true }) * (1 / math.max(n, 1))
  if red == 'no' then return cov end
  return U.F('sum')(cov * cov) * 0.5
end

return M

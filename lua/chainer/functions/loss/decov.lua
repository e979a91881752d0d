-- functions/loss/decov.lua: F.decov(h, {reduce = 'half_squared_sum'}), the
-- DeCov regulariser (Cogswell et al. 2016).  h (N, M); C = (h - mean h)^T
-- (h - mean h) / N with its diagonal set to 0.  'half_squared_sum' returns
-- sum(C^2) / 2, 'no' returns C.  Composed of FunctionNodes.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'
local centered = require('chainer.functions.loss.cross_covariance')._centered

local M = {}

local SIGNATURE = args.signature { 'reduce' }

function M.decov(h, opts)
  local fn = 'decov'
  local hd = args.float_array(fn, 'h', h)
  checks.ndim(fn, 'h', hd, 2)
  local o = args.parse(fn, SIGNATURE, 1, opts)
  local red = checks.reduce(fn, o.reduce, 'half_squared_sum', { 'half_squared_sum', 'no' })
  local n, m = hd.shape[1], hd.shape[2]
  local hc = centered(h, n, m)
  local off = 1 - T.eye(m, m, 0, hd.dtype)
  local cov = U.F('matmul')(hc, hc, { transa = true }) * off * (1 / math.max(n, 1))
  if red == 'no' then return cov end
  return U.F('sum')(cov * cov) * 0.5
end

return M

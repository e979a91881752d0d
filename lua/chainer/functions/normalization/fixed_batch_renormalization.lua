-- functions/normalization/fixed_batch_renormalization.lua:
--   F.fixed_batch_renormalization(x, gamma, beta, mean, var, eps = 2e-5)
--
-- Deprecated in Chainer in favour of F.fixed_batch_normalization, which it
-- is: gamma (x - mean) / sqrt(var + eps) + beta over every axis but 1, with
-- gradients for all five inputs to any order.
local args = require 'chainer._args'
local fixed_batch_normalization = require('chainer.functions.normalization.batch_normalization')
  .fixed_batch_normalization

local M = {}

local SIGNATURE = args.signature { 'eps' }

function M.fixed_batch_renormalization(x, gamma, beta, mean, var, ...)
  local a = args.parse('fixed_batch_renormalization', SIGNATURE, select('#', ...), ...)
  local eps = a.eps
  if eps ~= nil and (type(eps) ~= 'number' or eps < 0) then
    error(string.format('fixed_batch_renormalization: eps must be a non-negative number (got %s)', tostring(eps)), 2)
  end
  return fixed_batch_normalization(x, gamma, beta, mean, var, { eps = eps })
end

return M

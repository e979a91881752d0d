-- functions/normalization/local_response_normalization.lua:
-- F.local_response_normalization(x, {n = 5, k = 2, alpha = 1e-4, beta = 0.75})
-- across axis 1 of x (N, C, ...):
--   y = x / (k + alpha * sum_{|c' - c| <= n // 2} x[c']^2) ^ beta.
-- Forward and gradient are fused C kernels (runtime/cpu/lrn.c).  As in
-- Chainer, the gradient node is not differentiable again (no double
-- backprop).
local args = require 'chainer._args'
local FunctionNode = require 'chainer.function_node'
local N = require 'chainer.functions.normalization._util'

local M = {}

local LRN = FunctionNode:extend('LocalResponseNormalization')
local LRNGrad = FunctionNode:extend('LocalResponseNormalizationGrad')
M.LocalResponseNormalization, M.LocalResponseNormalizationGrad = LRN, LRNGrad

function LRN:forward(inputs)
  self:retain_inputs({ 1 })
  self:retain_outputs({ 1 })
  local y, us = N.lrn_forward(inputs[1], self.n, self.k, self.alpha, self.beta)
  self.unit_scale = us
  return { y }
end

function LRN:backward(idx, gys)
  local g = setmetatable({}, LRNGrad)
  g.n, g.alpha, g.beta, g.unit_scale = self.n, self.alpha, self.beta, self.unit_scale
  -- x and y are inputs of the gradient node so that a second
  -- differentiation reaches it (and fails clearly) instead of seeing none
  local x, y = self:get_retained_inputs()[1], self:get_retained_outputs()[1]
  return { g:apply({ x, y, gys[1] })[1] }
end

function LRNGrad:forward(inputs)
  return { N.lrn_backward(inputs[1], inputs[2], self.unit_scale, inputs[3], self.n, self.alpha, self.beta) }
end

function LRNGrad:backward()
  error('local_response_normalization: double backprop is not supported (as in Chainer)', 2)
end

local OPTIONS = args.accept { 'n', 'k', 'alpha', 'beta' }

function M.local_response_normalization(x, opts)
  local fn = 'local_response_normalization'
  local xd = args.float_array(fn, 'x', x, 2)
  if xd.ndim < 2 then
    error(string.format('%s: x must have at least 2 dimensions (N, C, ...), got %d-d', fn, xd.ndim), 2)
  end
  opts = args.options(fn, opts, OPTIONS)
  local n = opts.n or 5
  if type(n) ~= 'number' or n < 1 or n ~= math.floor(n) then
    error(string.format('%s: n must be a positive integer (got %s)', fn, tostring(n)), 2)
  end
  for _, name in ipairs({ 'k', 'alpha', 'beta' }) do
    if opts[name] ~= nil and type(opts[name]) ~= 'number' then
      error(string.format('%s: %s must be a number (got %s)', fn, name, tostring(opts[name])), 2)
    end
  end
  local f = setmetatable({}, LRN)
  f.n, f.k, f.alpha, f.beta = n, opts.k or 2, opts.alpha or 1e-4, opts.beta or 0.75
  return f:apply({ x })[1]
end

return M

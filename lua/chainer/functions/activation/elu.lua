-- functions/activation/elu.lua: F.elu(x, {alpha = 1}) (x where x >= 0,
-- alpha * (exp(x) - 1) elsewhere) and F.selu(x, {alpha =, scale =})
-- (scale * elu(x, alpha) with the self-normalising constants).  The
-- gradient gy * (y + alpha) on the negative side uses the retained output,
-- so double backprop works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local ELU_OPTIONS = args.accept { 'alpha' }
local SELU_OPTIONS = args.accept { 'alpha', 'scale' }

local ELU = FunctionNode:extend('ELU')
M.ELU = ELU

function ELU:forward(inputs)
  local x = inputs[1]
  self:retain_outputs({ 1 })
  local neg = T.lt(x, 0)
  self._neg = neg:astype(x.dtype)
  return { T.where(neg, T.expm1(x) * self.alpha, x) }
end

function ELU:backward(idx, gys)
  local y = self:get_retained_outputs()[1]
  local neg = self._neg
  -- 1 where x >= 0, y + alpha where x < 0
  local coef = (y + self.alpha) * neg + (1 - neg)
  return { gys[1] * coef }
end

local function elu(x, alpha)
  local f = setmetatable({}, ELU)
  f.alpha = alpha
  return f:apply({ x })[1]
end

function M.elu(x, opts)
  args.float_array('elu', 'x', x)
  local alpha = H.number_or_option('elu', opts, ELU_OPTIONS, 'alpha', 1.0)
  if type(alpha) ~= 'number' then error('elu: alpha must be a number (got ' .. type(alpha) .. ')', 2) end
  return elu(x, alpha)
end

local SELU_ALPHA = 1.6732632423543772848170429916717
local SELU_SCALE = 1.0507009873554804934193349852946

function M.selu(x, opts)
  args.float_array('selu', 'x', x)
  opts = args.options('selu', opts, SELU_OPTIONS)
  local alpha, scale = opts.alpha or SELU_ALPHA, opts.scale or SELU_SCALE
  if type(alpha) ~= 'number' or type(scale) ~= 'number' then error('selu: alpha and scale must be numbers', 2) end
  return elu(x, alpha) * scale
end

return M

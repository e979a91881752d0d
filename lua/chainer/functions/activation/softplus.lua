-- functions/activation/softplus.lua: F.softplus(x, {beta = 1}) =
-- log(1 + exp(beta * x)) / beta, computed stably; the gradient
-- gy * sigmoid(beta * x) is differentiable again.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'beta' }

local Softplus = FunctionNode:extend('Softplus')
M.Softplus = Softplus

function Softplus:forward(inputs)
  local x = inputs[1]
  self:retain_inputs({ 1 })
  local b = self.beta
  if b == 1 then return { T.softplus(x) } end
  return { T.softplus(x * b) * (1 / b) }
end

function Softplus:backward(idx, gys)
  local F = H.F()
  local x = self:get_retained_inputs()[1]
  local b = self.beta
  return { gys[1] * F.sigmoid(b == 1 and x or x * b) }
end

function M.softplus(x, opts)
  args.float_array('softplus', 'x', x)
  local beta = H.number_or_option('softplus', opts, OPTIONS, 'beta', 1.0)
  if type(beta) ~= 'number' or beta == 0 then
    error('softplus: beta must be a non-zero number (got ' .. tostring(beta) .. ')', 2)
  end
  local f = setmetatable({}, Softplus)
  f.beta = beta
  return f:apply({ x })[1]
end

return M

-- functions/activation/relu.lua: F.relu(x) = max(x, 0).  The gradient
-- gy * (y > 0) is one C pass (ReLUGrad2, as in Chainer), itself
-- differentiable: its gradient is ReLUGrad2 again.  When no graph is to be
-- recorded (inference under no_backprop_mode, an input without a gradient;
-- FunctionNode.can_skip_node) F.relu runs the kernel alone and wraps its
-- result, as the arithmetic operators do: no node, no tables.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local new_var = require('chainer.variable').new_var
local skip_node = FunctionNode.can_skip_node
local K = require 'chainer.functions.activation._kernels'

local M = {}

local ReLU = FunctionNode:extend('ReLU')
M.ReLU = ReLU
ReLU.is_elementwise = true   -- Chainer's flag: a memory layout passes through

-- input: gy; the output y of relu is a constant of this node
local ReLUGrad2 = FunctionNode:extend('ReLUGrad2')
M.ReLUGrad2 = ReLUGrad2

local function grad2(y, gy)
  local f = setmetatable({}, ReLUGrad2)
  f._y = y
  return f:apply({ gy })[1]
end

function ReLUGrad2:forward(inputs) return { K.activation_grad(K.RELU, self._y, inputs[1]) } end
function ReLUGrad2:backward(idx, gys) return { grad2(self._y, gys[1]) } end

local RETAIN1 = { 1 }
function ReLU:forward(inputs)
  self:retain_outputs(RETAIN1)
  local y = T.relu(inputs[1])
  self._yd = y
  return { y }
end
function ReLU:backward(idx, gys)
  local y = self:get_retained_outputs()[1]
  return { grad2(y._data, gys[1]) }
end
-- On tensors: ReLUGrad2's C pass itself, without the node.
function ReLU:backward_tensors(idx, gys, gxs)
  gxs[1] = K.activation_grad(K.RELU, self._yd, gys[1])
end

function M.relu(x)
  local d = args.float_array('relu', 'x', x)
  local requires_grad = type(x) == 'table' and x._requires_grad == true
  if skip_node(requires_grad) then
    local v = new_var(T.relu(d), requires_grad)
    return v   -- (not a tail call: see variable.lua's new_var)
  end
  return setmetatable({}, ReLU):apply({ x })[1]
end

return M

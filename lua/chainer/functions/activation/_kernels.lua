-- functions/activation/_kernels.lua: Lua entry points of the C activation
-- kernels (runtime/cpu/softmax.c, activation_grad.c), and the
-- "piecewise-linear" node shared by several activations.
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local C, check, box, wrap = T.C, T.check, T.box, T.wrap

local K = {}

function K.softmax(x, axis, log)
  check(C.ch_softmax(x.ptr, axis, log and 1 or 0, box), 3)
  return wrap(box[0])
end

function K.softmax_grad(y, gy, axis, log)
  check(C.ch_softmax_grad(y.ptr, gy.ptr, axis, log and 1 or 0, box), 3)
  return wrap(box[0])
end

K.RELU, K.SIGMOID, K.TANH = T.ops.act_grad_op.relu, T.ops.act_grad_op.sigmoid, T.ops.act_grad_op.tanh
function K.activation_grad(op, y, gy)
  check(C.ch_activation_grad(op, y.ptr, gy.ptr, box), 3)
  return wrap(box[0])
end

-- The node pair of an activation whose gradient is a function of its output
-- y alone (sigmoid, tanh): <name> computes y = f(x) and retains y; its
-- gradient node <name>Grad (inputs y, gy) runs the C kernel `op` in one
-- pass.  That is linear in gy, so its own d/dgy is <name>Grad again; its
-- d/dy is dgrad_dy(y, gy, ggx), composed, so any order of gradients works.
-- Returns the node class and the gradient node class.
function K.output_activation(name, f, op, dgrad_dy)
  local cls = FunctionNode:extend(name)
  local grad = FunctionNode:extend(name .. 'Grad')
  function grad:forward(inputs)
    self:retain_inputs({ 1, 2 })
    return { K.activation_grad(op, inputs[1], inputs[2]) }
  end
  function grad:backward(idx, gys)
    local xs = self:get_retained_inputs()
    local y, gy = xs[1], xs[2]
    local ggx = gys[1]
    local g_y, g_gy
    if H.wants(idx, 1) then g_y = dgrad_dy(y, gy, ggx) end
    if H.wants(idx, 2) then g_gy = setmetatable({}, grad):apply({ y, ggx })[1] end
    return { g_y, g_gy }
  end
  function cls:forward(inputs)
    self:retain_outputs({ 1 })
    return { f(inputs[1]) }
  end
  function cls:backward(idx, gys)
    local y = self:get_retained_outputs()[1]
    return { setmetatable({}, grad):apply({ y, gys[1] })[1] }
  end
  return cls, grad
end

-- A node y = f(x) whose derivative is a constant tensor c (fixed by the
-- forward pass, e.g. a mask times a slope): gx = gy * c.  The backward is
-- linear in gy, so any order of gradients works.
--   local LeakyReLU = K.piecewise('LeakyReLU', function(x, node) return y, c end)
function K.piecewise(name, fn)
  local cls = FunctionNode:extend(name)
  function cls:forward(inputs)
    local y, c = fn(inputs[1], self)
    self._c = c
    return { y }
  end
  function cls:backward(idx, gys) return { gys[1] * self._c } end
  return cls
end

return K

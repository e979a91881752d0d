-- functions/activation/_kernels.lua: Lua entry points of the C activation
-- kernels (runtime/cpu/softmax.c, activation_grad.c), and the
-- "piecewise-linear" node shared by several activations.
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'

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

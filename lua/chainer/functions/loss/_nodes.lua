-- functions/loss/_nodes.lua: the small differentiable pieces the loss
-- functions are composed from (not exported into F): sigmoid, softplus,
-- log_softmax along axis 1, row gather, the mean of everything, each with a
-- backward built from other FunctionNodes so that the losses built on them
-- support double backprop.
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'
local checks = require 'chainer.functions.loss._checks'

local U = {}

-- F.<name>, looked up at call time (the families load each other).
local function F(name) return H.F()[name] end
U.F = F

-- sigmoid(x) = 1 / (1 + exp(-x)); d/dx = y (1 - y).  The nodes without
-- H.unary's wrapper: their inputs are the losses' own, already checked.
local Sigmoid = H.unary { name = 'sigmoid', class = 'Sigmoid', retain = 'y', forward = T.sigmoid,
  grad = function(x, y, gy) return gy * y * (1 - y) end }
U.Sigmoid = Sigmoid
function U.sigmoid(x) return setmetatable({}, Sigmoid):apply({ x })[1] end

-- softplus(x) = log(1 + exp(x)); d/dx = sigmoid(x).
local Softplus = H.unary { name = 'softplus', class = 'Softplus', retain = 'x', forward = T.softplus,
  grad = function(x, y, gy) return gy * U.sigmoid(x) end }
U.Softplus = Softplus
function U.softplus(x) return setmetatable({}, Softplus):apply({ x })[1] end

-- Restores a reduced axis as size 1 and broadcasts back to `shape`.
local function expand_axis(g, shape, axis)
  local s = {}
  for i = 1, #shape do s[i] = shape[i] end
  s[axis + 1] = 1
  return F('broadcast_to')(F('reshape')(g, s), shape)
end
U.expand_axis = expand_axis

-- log_softmax along axis 1; d/dx = gy - exp(y) * sum(gy, axis 1).
local LogSoftmax = FunctionNode:extend('LogSoftmax')
U.LogSoftmax = LogSoftmax
function LogSoftmax:forward(inputs)
  self:retain_outputs({ 1 })
  local x = inputs[1]
  return { x - T.logsumexp(x, { axis = 1, keepdims = true }) }
end
function LogSoftmax:backward(idx, gys)
  local y = self:get_retained_outputs()[1]
  local gy = gys[1]
  local shape = y.shape
  return { gy - F('exp')(y) * expand_axis(F('sum')(gy, { axis = 1 }), shape, 1) }
end
function U.log_softmax(x) return setmetatable({}, LogSoftmax):apply({ x })[1] end

-- Rows of W (V, ...) picked by an integer index tensor: out shape
-- idx.shape .. W.shape[2:].  The gradient scatters back into W; its own
-- gradient is again a gather, so double backprop works.
local Gather, ScatterRows
Gather = FunctionNode:extend('GatherRows')
ScatterRows = FunctionNode:extend('ScatterRows')
U.Gather = Gather
function Gather:forward(inputs)
  local W = inputs[1]
  self._wshape = W.shape
  return { T.take(W, self.idx, 0) }
end
function Gather:backward(idx, gys)
  local f = setmetatable({}, ScatterRows)
  f.idx, f._wshape = self.idx, self._wshape
  return { f:apply({ gys[1] })[1] }
end
function ScatterRows:forward(inputs)
  local gy = inputs[1]
  local s = self._wshape
  local gw = T.zeros(s, gy.dtype)
  local flat = self.idx:reshape(-1)
  local n = tonumber(flat.ptr.numel)
  local vs = { n }
  for i = 2, #s do vs[i] = s[i] end
  gw:scatter_add_(0, flat, gy:reshape(vs))
  return { gw }
end
function ScatterRows:backward(idx, gys)
  local f = setmetatable({}, Gather)
  f.idx = self.idx
  return { f:apply({ gys[1] })[1] }
end
function U.gather_rows(W, index)
  local f = setmetatable({}, Gather)
  f.idx = index
  return f:apply({ W })[1]
end

-- The 'mean' reduction of a per-example loss over a batch of n examples:
-- the sum divided by n, never by less than 1.  batch_mean takes Variables
-- (backward passes, composed losses); batch_mean_tensor a forward pass's
-- tensor, keeping its dtype.
function U.batch_mean(loss, n) return F('sum')(loss) * (1 / math.max(1, n)) end
function U.batch_mean_tensor(loss, n) return (T.sum(loss) * (1 / math.max(1, n))):astype(loss.dtype) end

-- F.mean of everything: sum(x) / size.
function U.mean_all(x)
  local d = Variable.as_array(x)
  return F('sum')(x) * (1 / math.max(1, tonumber(d.ptr.numel)))
end

-- A loss of the difference d = x0 - x1 alone (absolute_error, squared_error
-- and their means): a FunctionNode class spec.class whose forward is
-- spec.forward(node, d) and whose gradients are gx0 = spec.gx0(node, gy) and
-- gx1 = -gx0, and the public function spec.name(x0, x1) (x0 float, x1 of
-- its shape and dtype).  Returns the class and the function.
function U.difference_loss(spec)
  local cls = FunctionNode:extend(spec.class)
  function cls:forward(inputs) return { spec.forward(self, inputs[1] - inputs[2]) } end
  function cls:backward(idx, gys)
    local gx0 = spec.gx0(self, gys[1])
    return { gx0, -gx0 }
  end
  local function public(x0, x1)
    checks.x0_x1(spec.name, x0, x1)
    return setmetatable({}, cls):apply({ x0, x1 })[1]
  end
  return cls, public
end

return U

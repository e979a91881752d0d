-- functions/math/zeta.lua: F.zeta(x, q), the Hurwitz zeta function
-- sum_{k >= 0} (q + k)^-x.  As in Chainer, x is a constant (a number or an
-- array) and only q is differentiable: d zeta(x, q) / dq = -x zeta(x + 1, q).
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

-- SciPy computes in the promoted type of x and q; Chainer casts the result
-- to q's dtype.  The order x is held by the node, not an input.
local Zeta = FunctionNode:extend('Zeta')
M.Zeta = Zeta
function Zeta:forward(inputs)
  self:retain_inputs({ 1 })
  local q = inputs[1]
  return { T.zeta(self.x, q):astype(q.dtype) }
end
function Zeta:backward(idx, gys)
  local q = self:get_retained_inputs()[1]
  local x = self.x
  return { gys[1] * M.zeta(x + 1, q) * (type(x) == 'number' and -x or (-x):astype(q.dtype)) }
end

-- F.zeta(x, q): x a number or a float tensor of q's shape (or one that
-- broadcasts to it; a Variable's data is taken as a constant), q a float
-- Variable or tensor.
function M.zeta(x, q)
  local qd = args.float_array('zeta', 'q', q)
  if type(x) ~= 'number' then
    local xd = args.float_array('zeta', 'x', x)
    H.want_broadcast('zeta', 'x', xd, 'q', qd.shape)
    x = xd
  end
  local node = setmetatable({ x = x }, Zeta)
  return node:apply({ q })[1]
end

return M

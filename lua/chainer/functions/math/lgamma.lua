-- functions/math/lgamma.lua: the gamma family: F.lgamma (log |Gamma(x)|),
-- F.digamma (its derivative) and F.polygamma(n, x) (the n-th derivative of
-- digamma).  Each one's gradient is the next, so all are differentiable to
-- any order; polygamma's order n (an integer array) has no gradient.
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

M.LGamma, M.lgamma = H.unary { name = 'lgamma', class = 'LGamma', retain = 'x', forward = T.lgamma,
  grad = function(x, y, gy) return gy * M.digamma(x) end }

-- Polygamma's inputs are (n, x).  SciPy computes in the promoted type of n
-- and x (float64 for an int32 n) and Chainer casts the result to x's dtype;
-- the same here.
local Polygamma = FunctionNode:extend('Polygamma')
M.Polygamma = Polygamma
function Polygamma:forward(inputs)
  self:retain_inputs({ 1, 2 })
  local n, x = inputs[1], inputs[2]
  return { T.polygamma(n, x):astype(x.dtype) }
end
function Polygamma:backward(idx, gys)
  local n, x = unpack(self:get_retained_inputs())
  return { nil, gys[1] * M.polygamma(n.array + 1, x) }
end

-- F.polygamma(n, x): n an integer tensor (or Variable) of x's shape or one
-- that broadcasts to it, or a Lua integer.
function M.polygamma(n, x)
  local xd = args.float_array('polygamma', 'x', x)
  if type(n) == 'number' then
    if n ~= math.floor(n) or n < 0 then
      error(string.format('polygamma: n must be a non-negative integer (got %s)', tostring(n)), 2)
    end
    n = T.full(xd.shape, n, 'int32')
  end
  local nd = args.int_array('polygamma', 'n', n)
  H.want_broadcast('polygamma', 'n', nd, 'x', xd.shape)
  return setmetatable({}, Polygamma):apply({ n, x })[1]
end

-- digamma's gradient is polygamma of order 1 (trigamma), whose own gradient
-- is polygamma of order 2, and so on.
M.DiGamma, M.digamma = H.unary { name = 'digamma', class = 'DiGamma', retain = 'x', forward = T.digamma,
  grad = function(x, y, gy) return gy * M.polygamma(1, x) end }

return M

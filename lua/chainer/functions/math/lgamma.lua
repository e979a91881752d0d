-- functions/math/lgamma.lua: F.lgamma (log |Gamma(x)|) and F.digamma (its
-- derivative).  lgamma is differentiable twice; digamma's gradient is the
-- trigamma function, computed here from tensor ops (a recurrence shift to
-- x >= 6, an asymptotic series, and the reflection formula for x <= 0);
-- the trigamma node itself has no gradient.
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

M.LGamma, M.lgamma = H.unary { name = 'lgamma', class = 'LGamma', retain = 'x', forward = T.lgamma,
  grad = function(x, y, gy) return gy * M.digamma(x) end }

-- trigamma of a float64 tensor with every element > 0
local function trigamma_pos(x)
  local acc = T.zeros_like(x)
  local z = x
  for _ = 1, 6 do
    acc = acc + T.reciprocal(z * z)
    z = z + 1
  end
  local r = T.reciprocal(z)
  local r2 = r * r
  -- 1/z + 1/(2z^2) + 1/(6z^3) - 1/(30z^5) + 1/(42z^7) - 1/(30z^9)
  local series = r + r2 * 0.5 + r2 * r * ((((r2 * (-1 / 30)) + 1 / 42) * r2 - 1 / 30) * r2 + 1 / 6)
  return acc + series
end

local function trigamma(x)
  local dt = x.dtype
  local x64 = x:astype('float64')
  local pos = T.gt(x64, 0)
  local xp = T.where(pos, x64, 1 - x64)
  local t = trigamma_pos(xp)
  local s = T.sin(x64 * math.pi)
  local refl = T.reciprocal(s * s) * (math.pi * math.pi) - t
  return T.where(pos, t, refl):astype(dt)
end
M._trigamma = trigamma

local Trigamma = FunctionNode:extend('Trigamma')
M.Trigamma = Trigamma
function Trigamma:forward(inputs) return { trigamma(inputs[1]) } end
function Trigamma:backward()
  error('digamma: the second derivative (polygamma of order 2) is not implemented', 0)
end

M.DiGamma, M.digamma = H.unary { name = 'digamma', class = 'DiGamma', retain = 'x', forward = T.digamma,
  grad = function(x, y, gy) return gy * setmetatable({}, Trigamma):apply({ x })[1] end }

return M

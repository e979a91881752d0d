-- functions/math/fmod.lua: F.fmod(x, divisor), C's fmod (the result has the
-- sign of x).  d/dx = 1, d/ddivisor = -fix(x / divisor), as in Chainer.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local Fmod = FunctionNode:extend('Fmod')
M.Fmod = Fmod

function Fmod:forward(inputs)
  local x, d = inputs[1], inputs[2]
  self:retain_inputs({ 1, 2 })
  self._sa, self._sb = x.shape, d.shape
  return { T.fmod(x, d) }
end

function Fmod:backward(idx, gys)
  local F = H.F()
  local xs = self:get_retained_inputs()
  local gy = gys[1]
  local gx, gd
  if H.wants(idx, 1) then gx = F.sum_to(gy, self._sa) end
  if H.wants(idx, 2) then
    local q = T.trunc(T.div(xs[1]._data, xs[2]._data))
    gd = F.sum_to(-(gy * q), self._sb)
  end
  return { gx, gd }
end

function M.fmod(x, divisor)
  local a, b = H.float_pair('fmod', 'x', x, 'divisor', divisor)
  return setmetatable({}, Fmod):apply({ x, divisor })[1]
end

return M

-- functions/math/clip.lua: F.clip(x, x_min, x_max); either bound may be nil
-- or false (Python None) for no bound.  The gradient passes where
-- x_min <= x <= x_max (Chainer's rule) and is linear in gy, so double
-- backprop works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'

local M = {}

local SIGNATURE = args.signature { 'x_min', 'x_max' }

local Clip = FunctionNode:extend('Clip')
M.Clip = Clip

function Clip:forward(inputs)
  local x = inputs[1]
  local lo, hi = self.x_min, self.x_max
  local m
  if lo then m = T.ge(x, lo) end
  if hi then
    local mh = T.le(x, hi)
    m = m and T.logical_and(m, mh) or mh
  end
  self._mask = m:astype(x.dtype)
  return { T.clip(x, lo or nil, hi or nil) }
end

function Clip:backward(idx, gys) return { gys[1] * self._mask } end

-- F.clip(x, x_min, x_max) or F.clip(x, {x_min =, x_max =})
function M.clip(x, x_min, x_max)
  args.float_array('clip', 'x', x)
  local o = args.parse('clip', SIGNATURE, 2, x_min, x_max)
  x_min, x_max = o.x_min, o.x_max
  if x_min == nil then x_min = false end
  if x_max == nil then x_max = false end
  if x_min and type(x_min) ~= 'number' then error('clip: x_min must be a number or nil (got ' .. type(x_min) .. ')', 2) end
  if x_max and type(x_max) ~= 'number' then error('clip: x_max must be a number or nil (got ' .. type(x_max) .. ')', 2) end
  if not x_min and not x_max then error('clip: x_min and x_max cannot both be nil', 2) end
  if x_min and x_max and x_min > x_max then
    error(string.format('clip: x_min (%g) must not be greater than x_max (%g)', x_min, x_max), 2)
  end
  local f = setmetatable({}, Clip)
  f.x_min, f.x_max = x_min, x_max
  return f:apply({ x })[1]
end

return M

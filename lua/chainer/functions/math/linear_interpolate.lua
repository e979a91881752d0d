-- functions/math/linear_interpolate.lua: F.linear_interpolate(p, x, y) =
-- p * x + (1 - p) * y elementwise; gradients gy*(x - y), gy*p, gy*(1 - p),
-- differentiable again.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local LinearInterpolate = FunctionNode:extend('LinearInterpolate')
M.LinearInterpolate = LinearInterpolate

function LinearInterpolate:forward(inputs)
  local p, x, y = inputs[1], inputs[2], inputs[3]
  self:retain_inputs({ 1, 2, 3 })
  return { p * (x - y) + y }
end

function LinearInterpolate:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local p, x, y = xs[1], xs[2], xs[3]
  local g = gys[1]
  local gp, gx, gyy
  if H.wants(idx, 1) then gp = g * (x - y) end
  if H.wants(idx, 2) then gx = g * p end
  if H.wants(idx, 3) then gyy = g * (1 - p) end
  return { gp, gx, gyy }
end

function M.linear_interpolate(p, x, y)
  local dp = args.float_array('linear_interpolate', 'p', p)
  local dx = args.float_array('linear_interpolate', 'x', x)
  local dy = args.float_array('linear_interpolate', 'y', y)
  H.same_dtype(dp, dx, 'linear_interpolate', 'p', 'x')
  H.same_dtype(dp, dy, 'linear_interpolate', 'p', 'y')
  local sp, sx, sy = dp.shape, dx.shape, dy.shape
  local same = #sp == #sx and #sp == #sy
  if same then for i = 1, #sp do if sp[i] ~= sx[i] or sp[i] ~= sy[i] then same = false end end end
  if not same then
    error(string.format('linear_interpolate: p, x and y must have the same shape (got %s, %s and %s)',
      T.shape_str(sp), T.shape_str(sx), T.shape_str(sy)), 2)
  end
  return setmetatable({}, LinearInterpolate):apply({ p, x, y })[1]
end

return M

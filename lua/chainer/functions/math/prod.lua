-- functions/math/prod.lua: F.prod(x, {axis =, keepdims =}).
-- The gradient of each element is the product of the others, computed as
-- Chainer does (exclusive cumulative products from both ends over the
-- reduced elements), so it is exact with zeros and differentiable again.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'
local cum = require 'chainer.functions.math.cumulative'

local M = {}

local OPTIONS = args.accept { 'axis', 'keepdims' }

local Prod = FunctionNode:extend('Prod')
M.Prod = Prod

function Prod:forward(inputs)
  local x = inputs[1]
  self:retain_inputs({ 1 })
  self._shape = x.shape
  return { T.prod(x, { axis = self.axes, keepdims = self.keepdims }) }
end

function Prod:backward(idx, gys)
  local F = H.F()
  local x = self:get_retained_inputs()[1]
  local shape = self._shape
  local nd = #shape
  local axes = self.axes
  if axes == nil then axes = {} for i = 1, nd do axes[i] = i - 1 end end
  local gy = H.unreduce(gys[1], shape, self.axes, self.keepdims)
  if nd == 0 then return { gy } end
  -- bring the reduced axes to the front and merge them into one
  local reduced, perm, kept_shape, n = {}, {}, {}, 1
  for k = 1, #axes do reduced[axes[k]] = true perm[#perm + 1] = axes[k] n = n * shape[axes[k] + 1] end
  for a = 0, nd - 1 do
    if not reduced[a] then perm[#perm + 1] = a kept_shape[#kept_shape + 1] = shape[a + 1] end
  end
  local xt = F.transpose(x, perm)
  local tshape = xt.shape
  local flat = { n }
  for i = 1, #kept_shape do flat[i + 1] = kept_shape[i] end
  local xr = F.reshape(xt, flat)
  -- product of the elements before and after each position
  local before = F.cumprod(cum._shift(xr, 0, true, 1), { axis = 0 })
  local after = cum._flip(F.cumprod(cum._shift(cum._flip(xr, 0), 0, true, 1), { axis = 0 }), 0)
  local others = F.reshape(before * after, tshape)
  local inv = {}
  for i = 1, nd do inv[perm[i] + 1] = i - 1 end
  return { gy * F.transpose(others, inv) }
end

-- F.prod(x), F.prod(x, {axis = 1, keepdims = true}); axis may be a list.
function M.prod(x, opts)
  local d = args.array('prod', 'x', x)
  local axis, keepdims
  if type(opts) == 'number' or (type(opts) == 'table' and opts[1] ~= nil) then axis = opts -- Chainer's positional axis
  else
    opts = args.options('prod', opts, OPTIONS)
    axis, keepdims = opts.axis, opts.keepdims
  end
  local f = setmetatable({}, Prod)
  f.axes = H.axes(axis, d.ptr.nd, 'prod')
  f.keepdims = keepdims and true or false
  return f:apply({ x })[1]
end

return M

-- functions/activation/crelu.lua: F.crelu(x, {axis = 1}) =
-- concat(relu(x), relu(-x)) along axis.  The gradient
-- gx = gy_first * (x > 0) - gy_second * (x < 0) is linear in gy; its
-- transpose (CReLUGradT) and it are each other's gradients, so any order
-- of gradients works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'axis' }

local function halves(t, axis, n)
  local a, b = {}, {}
  for i = 1, t.ptr.nd do a[i] = { nil, nil } b[i] = { nil, nil } end
  a[axis + 1] = { 0, n }
  b[axis + 1] = { n, 2 * n }
  return T.slice_terms(t, a), T.slice_terms(t, b)
end

local CReLUGrad = FunctionNode:extend('CReLUGrad')
M.CReLUGrad = CReLUGrad
local CReLUGradT = FunctionNode:extend('CReLUGradT')
M.CReLUGradT = CReLUGradT

local function node(cls, pos, neg, axis, v)
  local f = setmetatable({}, cls)
  f.pos, f.neg, f.axis = pos, neg, axis
  return f:apply({ v })[1]
end

-- gy (2n along axis) -> gx (n)
function CReLUGrad:forward(inputs)
  local g1, g2 = halves(inputs[1], self.axis, self.pos.shape[self.axis + 1])
  return { g1 * self.pos - g2 * self.neg }
end
function CReLUGrad:backward(idx, gys) return { node(CReLUGradT, self.pos, self.neg, self.axis, gys[1]) } end

-- g (n) -> (2n): concat(g * pos, -g * neg)
function CReLUGradT:forward(inputs)
  local g = inputs[1]
  return { T.concatenate({ g * self.pos, -(g * self.neg) }, self.axis) }
end
function CReLUGradT:backward(idx, gys) return { node(CReLUGrad, self.pos, self.neg, self.axis, gys[1]) } end

local CReLU = FunctionNode:extend('CReLU')
M.CReLU = CReLU
function CReLU:forward(inputs)
  local x = inputs[1]
  self.pos = T.gt(x, 0):astype(x.dtype)
  self.neg = T.lt(x, 0):astype(x.dtype)
  return { T.concatenate({ T.relu(x), T.relu(-x) }, self.axis) }
end
function CReLU:backward(idx, gys) return { node(CReLUGrad, self.pos, self.neg, self.axis, gys[1]) } end

function M.crelu(x, opts)
  local d = args.float_array('crelu', 'x', x)
  local axis = H.number_or_option('crelu', opts, OPTIONS, 'axis', 1)
  if d.ptr.nd == 0 then error('crelu: x must have at least one axis (got a 0-d input)', 2) end
  local f = setmetatable({}, CReLU)
  f.axis = H.axis(axis, d.ptr.nd, 'crelu', 2)
  return f:apply({ x })[1]
end

return M

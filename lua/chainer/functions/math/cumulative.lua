-- functions/math/cumulative.lua: F.cumsum(x, {axis =}) and
-- F.cumprod(x, {axis =}); without an axis they run over the flattened x.
--
-- cumsum's gradient is a reversed cumsum (flip, cumsum, flip), so it is
-- differentiable to any order.  cumprod's gradient is
-- flip(cumsum(flip(gy * y))) / x, differentiable again, when x has no zero;
-- inputs with zeros take an exact first-order path (a recurrence along the
-- axis) that has no further gradient.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'axis' }

local function full_terms(nd) local t = {} for i = 1, nd do t[i] = { nil, nil } end return t end

-- private helpers (also used by prod): flip along an axis, and shifting
-- along an axis by one position (down: y[0] = fill, y[i] = x[i-1]; up:
-- y[i] = x[i+1], y[n-1] = fill).
local Flip = FunctionNode:extend('Flip')
M.Flip = Flip
function Flip:forward(inputs) return { inputs[1]:flip(self.axis) } end
function Flip:backward(idx, gys) return { M._flip(gys[1], self.axis) } end
function M._flip(x, axis)
  local f = setmetatable({}, Flip)
  f.axis = axis
  return f:apply({ x })[1]
end

local Shift = FunctionNode:extend('Shift')
M.Shift = Shift
function Shift:forward(inputs)
  local x = inputs[1]
  local nd, ax = x.ptr.nd, self.axis
  local y = T.full(x.shape, self.fill, x.dtype)
  local n = x.shape[ax + 1]
  if n > 1 then
    local ty, tx = full_terms(nd), full_terms(nd)
    if self.down then ty[ax + 1], tx[ax + 1] = { 1, nil }, { nil, n - 1 }
    else ty[ax + 1], tx[ax + 1] = { nil, n - 1 }, { 1, nil } end
    T.slice_terms(y, ty):copy_(T.slice_terms(x, tx))
  end
  return { y }
end
function Shift:backward(idx, gys) return { M._shift(gys[1], self.axis, not self.down, 0) } end
function M._shift(x, axis, down, fill)
  local f = setmetatable({}, Shift)
  f.axis, f.down, f.fill = axis, down, fill
  return f:apply({ x })[1]
end

-- Normalises cumsum/cumprod's axis option; flattens x when there is none.
local function prepare(fn, x, opts)
  local d = args.array(fn, 'x', x, 3)
  local axis = H.number_or_option(fn, opts, OPTIONS, 'axis', nil, 3)
  if axis == nil or axis == false then
    return H.F().reshape(x, { tonumber(d.ptr.numel) }), 0, d
  end
  if d.ptr.nd == 0 then error(fn .. ': axis is given but x is 0-d', 3) end
  return x, H.axis(axis, d.ptr.nd, fn, 3), d
end

local Cumsum = FunctionNode:extend('Cumsum')
M.Cumsum = Cumsum
function Cumsum:forward(inputs) return { T.cumsum(inputs[1], self.axis) } end
function Cumsum:backward(idx, gys)
  local a = self.axis
  return { M._flip(M._cumsum(M._flip(gys[1], a), a), a) }
end
function M._cumsum(x, axis)
  local f = setmetatable({}, Cumsum)
  f.axis = axis
  return f:apply({ x })[1]
end

-- F.cumsum(x), F.cumsum(x, {axis = 1}) (or F.cumsum(x, 1))
function M.cumsum(x, opts)
  local xv, axis = prepare('cumsum', x, opts)
  return M._cumsum(xv, axis)
end

-- exact gradient of cumprod for inputs with zeros (first order only):
-- gx_i = P_{i-1} * S_i where P is the exclusive prefix product and
-- S_i = gy_i + x_{i+1} * S_{i+1}.
local CumprodGrad = FunctionNode:extend('CumprodGrad')
function CumprodGrad:forward(inputs)
  local x, gy = inputs[1], inputs[2]
  local ax, nd = self.axis, x.ptr.nd
  local n = x.shape[ax + 1]
  local gx = T.zeros_like(x)
  local function at(t, i)
    local terms = full_terms(nd)
    terms[ax + 1] = { i, i + 1 }
    return T.slice_terms(t, terms)
  end
  local S = nil
  local Ss = {}
  for i = n - 1, 0, -1 do
    if S == nil then S = at(gy, i):copy()
    else S = at(gy, i) + at(x, i + 1) * S end
    Ss[i] = S
  end
  local P = nil
  for i = 0, n - 1 do
    local v = P and (P * Ss[i]) or Ss[i]
    at(gx, i):copy_(v)
    P = P and (P * at(x, i)) or at(x, i):copy()
  end
  return { gx }
end
function CumprodGrad:backward()
  error('cumprod: double backprop through an input that contains zeros is not supported', 0)
end

local Cumprod = FunctionNode:extend('Cumprod')
M.Cumprod = Cumprod
function Cumprod:forward(inputs)
  self:retain_inputs({ 1 })
  self:retain_outputs({ 1 })
  return { T.cumprod(inputs[1], self.axis) }
end
function Cumprod:backward(idx, gys)
  local x = self:get_retained_inputs()[1]
  local a = self.axis
  if T.any(T.eq(x._data, 0)):item() then
    local f = setmetatable({}, CumprodGrad)
    f.axis = a
    return { f:apply({ x, gys[1] })[1] }
  end
  local y = self:get_retained_outputs()[1]
  return { M._flip(M._cumsum(M._flip(gys[1] * y, a), a), a) / x }
end

-- F.cumprod(x), F.cumprod(x, {axis = 1}) (or F.cumprod(x, 1))
function M.cumprod(x, opts)
  local xv, axis = prepare('cumprod', x, opts)
  local f = setmetatable({}, Cumprod)
  f.axis = axis
  return f:apply({ xv })[1]
end

return M

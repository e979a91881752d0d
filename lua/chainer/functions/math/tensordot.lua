-- functions/math/tensordot.lua: F.tensordot(a, b, {axes = 2}) (or
-- F.tensordot(a, b, axes)), NumPy's tensordot: axes = n contracts the last
-- n axes of a with the first n of b; {{axes of a}, {axes of b}} names them.
-- The gradients are tensordots again (differentiable to any order).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'axes' }

local TensorDot = FunctionNode:extend('TensorDot')
M.TensorDot = TensorDot

function TensorDot:forward(inputs)
  self:retain_inputs({ 1, 2 })
  return { T.tensordot(inputs[1], inputs[2], { self.ca, self.cb }) }
end

-- free axes of an nd-d operand given its contracted ones
local function free_axes(nd, contracted)
  local c, out = {}, {}
  for _, a in ipairs(contracted) do c[a] = true end
  for a = 0, nd - 1 do if not c[a] then out[#out + 1] = a end end
  return out
end

-- the permutation that puts axes listed in `order` (a's axis of each result
-- position) back into ascending axis order
local function inverse(order)
  local perm = {}
  for pos, ax in ipairs(order) do perm[ax + 1] = pos - 1 end
  return perm
end

local function contracted_sorted_with_partner(c_self, c_other)
  -- pairs sorted by the other operand's axis: the order in which tensordot
  -- leaves the other's remaining axes
  local pairs_ = {}
  for k = 1, #c_self do pairs_[k] = { c_other[k], c_self[k] } end
  table.sort(pairs_, function(p, q) return p[1] < q[1] end)
  local out = {}
  for k = 1, #pairs_ do out[k] = pairs_[k][2] end
  return out
end

function TensorDot:backward(idx, gys)
  local F = H.F()
  local xs = self:get_retained_inputs()
  local a, b = xs[1], xs[2]
  local gy = gys[1]
  local ca, cb = self.ca, self.cb
  local na, nb = a._data.ptr.nd, b._data.ptr.nd
  local fa, fb = free_axes(na, ca), free_axes(nb, cb)
  local ga, gb
  if H.wants(idx, 1) then
    local gy_axes = {}
    for k = 1, #fb do gy_axes[k] = #fa + k - 1 end
    local r = M.tensordot(gy, b, { gy_axes, fb })
    local order = {}
    for k = 1, #fa do order[k] = fa[k] end
    local rest = contracted_sorted_with_partner(ca, cb)
    for k = 1, #rest do order[#order + 1] = rest[k] end
    ga = F.transpose(r, inverse(order))
  end
  if H.wants(idx, 2) then
    local gy_axes = {}
    for k = 1, #fa do gy_axes[k] = k - 1 end
    local r = M.tensordot(a, gy, { fa, gy_axes })
    local order = contracted_sorted_with_partner(cb, ca)
    for k = 1, #fb do order[#order + 1] = fb[k] end
    gb = F.transpose(r, inverse(order))
  end
  return { ga, gb }
end

function M.tensordot(a, b, axes)
  local da, db = H.float_pair('tensordot', 'a', a, 'b', b)
  -- Chainer's keyword form tensordot(a, b, axes=...) arrives as {axes = ...}
  axes = H.keyword_form('tensordot', axes, OPTIONS, 'axes')
  if axes == nil then axes = 2 end
  local na, nb = da.ptr.nd, db.ptr.nd
  local ca, cb = {}, {}
  if type(axes) == 'number' then
    if axes ~= math.floor(axes) or axes < 0 or axes > na or axes > nb then
      error(string.format('tensordot: axes = %s does not fit a %d-d a and a %d-d b', tostring(axes), na, nb), 2)
    end
    for k = 1, axes do ca[k] = na - axes + k - 1 cb[k] = k - 1 end
  elseif type(axes) == 'table' and #axes == 2 then
    local xa, xb = axes[1], axes[2]
    if type(xa) == 'number' then xa = { xa } end
    if type(xb) == 'number' then xb = { xb } end
    if type(xa) ~= 'table' or type(xb) ~= 'table' or #xa ~= #xb then
      error('tensordot: axes must be {{axes of a}, {axes of b}} with as many axes of a as of b', 2)
    end
    for k = 1, #xa do
      ca[k] = H.axis(xa[k], na, 'tensordot', 2, 'axis of a')
      cb[k] = H.axis(xb[k], nb, 'tensordot', 2, 'axis of b')
      if da.shape[ca[k] + 1] ~= db.shape[cb[k] + 1] then
        error(string.format('tensordot: axis %d of a (size %d) and axis %d of b (size %d) differ in size',
          ca[k], da.shape[ca[k] + 1], cb[k], db.shape[cb[k] + 1]), 2)
      end
    end
  else
    error('tensordot: axes must be an integer or {{axes of a}, {axes of b}} (got ' .. tostring(axes) .. ')', 2)
  end
  if type(axes) == 'number' then
    for k = 1, #ca do
      if da.shape[ca[k] + 1] ~= db.shape[cb[k] + 1] then
        error(string.format('tensordot: axis %d of a (size %d) and axis %d of b (size %d) differ in size',
          ca[k], da.shape[ca[k] + 1], cb[k], db.shape[cb[k] + 1]), 2)
      end
    end
  end
  local f = setmetatable({}, TensorDot)
  f.ca, f.cb = ca, cb
  return f:apply({ a, b })[1]
end

return M

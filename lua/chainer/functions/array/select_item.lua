-- functions/array/select_item.lua: F.select_item(x, t): y[i] = x[i, t[i]]
-- for x (B, N) and integer t (B).  The gradient scatters gy into zeros
-- (SelectItemGrad), whose own gradient is select_item again.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'

local M = {}

local SelectItem = FunctionNode:extend('SelectItem')
local SelectItemGrad = FunctionNode:extend('SelectItemGrad')
M.SelectItem, M.SelectItemGrad = SelectItem, SelectItemGrad

function SelectItem:forward(inputs)
  local x = inputs[1]
  self._in_shape = x.shape
  local n = x.shape[1]
  return { T.take_along_axis(x, self.t:reshape({ n, 1 }), 1):reshape({ n }) }
end

function SelectItem:backward(_, gys)
  local g = setmetatable({}, SelectItemGrad)
  g.t, g.shape = self.t, self._in_shape
  return { g:apply({ gys[1] })[1] }
end

function SelectItemGrad:forward(inputs)
  local gy = inputs[1]
  local n = self.shape[1]
  local gx = T.zeros(self.shape, gy.dtype, gy.ptr.dev)
  gx:scatter_add_along_axis_(1, self.t:reshape({ n, 1 }), gy:reshape({ n, 1 }))
  return { gx }
end

function SelectItemGrad:backward(_, ggs)
  local f = setmetatable({}, SelectItem)
  f.t = self.t
  return { f:apply({ ggs[1] })[1] }
end

-- F.select_item(x, t)
function M.select_item(x, t)
  local d = args.array('select_item', 'x', x)
  local tt = args.int_array('select_item', 't', t)
  if d.ptr.nd ~= 2 then error(string.format('select_item: x must be 2-d (B, N) (got %d-d)', d.ptr.nd), 2) end
  if tt.ptr.nd ~= 1 then error(string.format('select_item: t must be 1-d (B) (got %d-d)', tt.ptr.nd), 2) end
  local B, N = d.shape[1], d.shape[2]
  if tt.shape[1] ~= B then
    error(string.format('select_item: t has %d entries but x has %d rows', tt.shape[1], B), 2)
  end
  if B > 0 then
    local lo, hi = T.min(tt):item(), T.max(tt):item()
    if lo < 0 or hi >= N then
      error(string.format('select_item: t holds %d, out of range for %d columns (expected 0..%d)',
        lo < 0 and lo or hi, N, N - 1), 2)
    end
  end
  local f = setmetatable({}, SelectItem)
  f.t = tt
  return f:apply({ x })[1]
end

return M

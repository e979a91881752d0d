-- functions/array/scatter_add.lua: F.scatter_add(a, slices, b): a copy of
-- a with b added at a[slices] (numpy.add.at: repeated positions
-- accumulate; b broadcasts to the indexed shape).  Gradients: gy for a,
-- get_item(gy, slices) summed to b's shape for b.
--
-- slices takes get_item's terms, with one difference that follows Python:
-- a Lua array of plain integers is an integer index array (Chainer's
-- F.scatter_add(a, [0, 2, 0], b)), not a tuple of integers; write a tuple
-- of integers as a string ('1, 2') or with a non-integer term.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local GI = require 'chainer.functions.array.get_item'

local M = {}

local ScatterAdd = FunctionNode:extend('ScatterAdd')
M.ScatterAdd = ScatterAdd

function ScatterAdd:forward(inputs)
  local a, b = inputs[1], inputs[2]
  local y = a:copy()
  local ids = self.ids
  local vals = b:broadcast_to(ids.shape)
  y:reshape(-1):scatter_add_(0, ids:reshape(-1), vals:reshape(-1))
  return { y }
end

function ScatterAdd:backward(idx, gys)
  local gy = gys[1]
  local ga, gb
  for k = 1, #idx do
    if idx[k] == 1 then ga = gy end
    if idx[k] == 2 then
      local sum_to = require('chainer.functions.math.sum_to').sum_to
      gb = sum_to(GI.get_item(gy, self.slices), self.b_shape)
    end
  end
  return { ga, gb }
end

local function all_ints(s)
  if type(s) ~= 'table' or T.is_tensor(s) or s._is_variable or #s == 0 then return false end
  for i = 1, #s do if type(s[i]) ~= 'number' then return false end end
  return true
end

-- F.scatter_add(a, slices, b)
function M.scatter_add(a, slices, b)
  local da = args.array('scatter_add', 'a', a)
  local db = args.array('scatter_add', 'b', b)
  if da.dtype ~= db.dtype then
    error(string.format('scatter_add: a is %s but b is %s (they must share a dtype)', da.dtype, db.dtype), 2)
  end
  if all_ints(slices) then slices = { T.array(slices, 'int64') } end
  local terms = GI._parse_terms('scatter_add', slices)
  local ids = GI._named('scatter_add', GI._flat_positions, da, terms)
  local is, bs = ids.shape, db.shape
  if #bs > #is then
    error(string.format('scatter_add: b of shape %s does not broadcast to the indexed shape %s',
      T.shape_str(bs), T.shape_str(is)), 2)
  end
  for i = 1, #bs do
    local want = is[#is - #bs + i]
    if bs[i] ~= 1 and bs[i] ~= want then
      error(string.format('scatter_add: b of shape %s does not broadcast to the indexed shape %s',
        T.shape_str(bs), T.shape_str(is)), 2)
    end
  end
  local f = setmetatable({}, ScatterAdd)
  f.ids, f.slices, f.b_shape = ids, terms, bs
  return f:apply({ a, b })[1]
end

return M

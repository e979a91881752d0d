-- functions/array/broadcast.lua: F.broadcast(x1, x2, ...) broadcasts its
-- arguments against each other (NumPy rules); one broadcast_to per input,
-- so gradients are summed back with sum_to.  One argument gives one
-- Variable, several give as many return values.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local broadcast_to = require('chainer.functions.array.broadcast_to').broadcast_to

local M = {}

local function broadcast_shape(xs)
  local shape = {}
  for k = 1, #xs do
    local s = xs[k].shape
    local n = math.max(#s, #shape)
    local r = {}
    for i = 1, n do
      local a = s[#s - n + i] or 1
      local b = shape[#shape - n + i] or 1
      if a ~= b and a ~= 1 and b ~= 1 then
        error(string.format('broadcast: shapes %s and %s cannot be broadcast together (argument %d)',
          T.shape_str(shape), T.shape_str(s), k), 3)
      end
      r[i] = a == 1 and b or a
    end
    shape = r
  end
  return shape
end

function M.broadcast(...)
  local n = select('#', ...)
  local xs = { ... }
  if n == 0 then error('broadcast: expected at least one argument', 2) end
  local ds = {}
  for i = 1, n do ds[i] = args.array('broadcast', 'argument ' .. i, xs[i]) end
  local shape = broadcast_shape(ds)
  local out = {}
  for i = 1, n do out[i] = broadcast_to(xs[i], shape) end
  return unpack(out, 1, n)
end

return M

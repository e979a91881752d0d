-- functions/array/repeat.lua: F.repeat_(x, repeats, axis) (numpy.repeat;
-- also F['repeat'], `repeat` being a Lua keyword).  A gather (Take) of the
-- positions arange(n) repeated, so the gradient is a scatter-add of gy
-- (TakeGrad) and both orders of differentiation come from the same pair.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local U = require 'chainer.functions.array._util'
local take = require('chainer.functions.array._take')._take

local M = {}

local SIGNATURE = args.signature { 'repeats', 'axis' }

-- F.repeat_(x, repeats, axis = nil): repeats a number or one count per
-- position along axis; axis nil repeats the flattened x.
function M.repeat_(x, repeats, axis)
  local v = args.parse('repeat', SIGNATURE, 2, repeats, axis)
  local d = args.array('repeat', 'x', x)
  repeats, axis = v.repeats, v.axis
  if axis == false then axis = nil end
  if T.is_tensor(repeats) then repeats = repeats:tolist() end
  if type(repeats) == 'table' and #repeats == 1 then repeats = repeats[1] end
  if type(repeats) ~= 'number' and type(repeats) ~= 'table' then
    error('repeat: repeats must be an integer or a table of integers', 2)
  end
  local list = type(repeats) == 'number' and { repeats } or repeats
  for i = 1, #list do
    if type(list[i]) ~= 'number' or list[i] ~= math.floor(list[i]) or list[i] < 0 then
      error(string.format('repeat: repeats must be non-negative integers (got %s)', tostring(list[i])), 2)
    end
  end
  local n
  if axis == nil then
    n = d.size
  else
    if d.ptr.nd == 0 then error('repeat: axis must be nil for a 0-d input', 2) end
    axis = U.axis('repeat', axis, d.ptr.nd)
    n = d.shape[axis + 1]
  end
  if type(repeats) == 'table' and #repeats ~= n then
    error(string.format('repeat: repeats has %d entries but the axis has %d positions', #repeats, n), 2)
  end
  local idx = T.repeat_(T.arange(0, n, 1, 'int64'), repeats, 0)
  return take(x, idx, axis, 'Repeat')
end

return M

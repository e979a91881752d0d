-- functions/array/_util.lua: checks of the integer, axis and list
-- arguments shared by the array family (private: nothing here is exported
-- into F).  Tensors and options go through chainer._args.
local T = require 'chainer.tensor'
local args = require 'chainer._args'

local U = {}

-- An integer argument (Python None arrives as false: treated as nil).
function U.int(fn, v, name, default)
  if v == nil or v == false then return default end
  if type(v) ~= 'number' or v ~= math.floor(v) then
    error(string.format('%s: %s must be an integer (got %s)', fn, name, tostring(v)), 3)
  end
  return v
end

-- Normalised 0-based axis for an nd-d input.
function U.axis(fn, a, nd, name)
  if type(a) ~= 'number' or a ~= math.floor(a) or a < -nd or a >= nd then
    error(string.format('%s: %s %s is out of range for a %d-d input (expected %d..%d)', fn, name or 'axis',
      tostring(a), nd, -nd, nd - 1), 3)
  end
  return a < 0 and a + nd or a
end

-- A Lua array of Variables/tensors (Chainer's xs).
function U.list(fn, xs, name, level)
  level = (level or 2) + 1
  if type(xs) ~= 'table' or T.is_tensor(xs) or xs._is_variable then
    error(string.format('%s: %s must be a Lua array of Variables or tensors', fn, name or 'xs'), level)
  end
  if #xs == 0 then error(string.format('%s: %s is empty (expected at least one array)', fn, name or 'xs'), level) end
  for i = 1, #xs do args.array(fn, string.format('%s[%d]', name or 'xs', i), xs[i], level) end
  return xs
end

function U.copy_shape(s)
  local r = {}
  for i = 1, #s do r[i] = s[i] end
  return r
end

return U

-- functions/array/_util.lua: argument helpers shared by the array family
-- (private: nothing here is exported into F).
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'

local U = {}

-- An options table: a plain Lua table with named fields and no array part.
local function is_opts(v)
  return type(v) == 'table' and getmetatable(v) == nil and v[1] == nil and next(v) ~= nil
end
U.is_opts = is_opts

-- Chainer's positional arguments may also come by name in a trailing
-- options table (F.split_axis(x, {indices_or_sections = 3, axis = 1})).
-- names lists the positional parameters after x, in Chainer's order; the
-- first argument that is an options table ends the positional ones and
-- fills the rest by name.  Returns the values in order (a table) and the
-- options table (or an empty one).  Unknown option names are errors.
function U.args(fn, names, a1, a2, a3, a4, a5)
  local vals = { a1, a2, a3, a4, a5 }
  local n = #names
  for i = 1, n + 1 do
    local v = vals[i]
    -- an empty plain table after the first positional argument, with nothing
    -- after it, is an empty options table
    local empty_opts = i > 1 and type(v) == 'table' and getmetatable(v) == nil and next(v) == nil
      and vals[i + 1] == nil
    if is_opts(v) or empty_opts then
      for k = i, 5 do vals[k] = nil end
      for key in pairs(v) do
        local known = false
        for j = 1, n do if names[j] == key then known = true break end end
        if not known then
          error(string.format("%s: unknown option '%s' (expected one of: %s)", fn, tostring(key),
            table.concat(names, ', ')), 3)
        end
      end
      for j = 1, n do
        if vals[j] == nil then vals[j] = v[names[j]] end
      end
      return vals, v
    end
  end
  return vals, {}
end

-- The tensor of a Variable or tensor argument, with a clear error otherwise.
function U.data(fn, x, name)
  local d = Variable.as_array(x)
  if not T.is_tensor(d) then
    error(string.format('%s: %s must be a Variable or a tensor (got %s)', fn, name or 'x', type(x)), 3)
  end
  return d
end

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
function U.list(fn, xs, name)
  if type(xs) ~= 'table' or T.is_tensor(xs) or Variable.is_variable and Variable.is_variable(xs)
    or (type(xs) == 'table' and xs._is_variable) then
    error(string.format('%s: %s must be a Lua array of Variables or tensors', fn, name or 'xs'), 3)
  end
  if #xs == 0 then error(string.format('%s: %s is empty (expected at least one array)', fn, name or 'xs'), 3) end
  for i = 1, #xs do U.data(fn, xs[i], string.format('%s[%d]', name or 'xs', i)) end
  return xs
end

function U.copy_shape(s)
  local r = {}
  for i = 1, #s do r[i] = s[i] end
  return r
end

return U

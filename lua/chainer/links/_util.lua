-- links/_util.lua: helpers shared by the concrete links.
local T = require 'chainer.tensor'
local Parameter = require 'chainer.parameter'
local I = require 'chainer.initializers'

local M = {}

-- Splits Chainer's positional arguments and a trailing options table:
-- args(fn, names, {...}, n) -> table name -> value.  Positional values fill
-- `names` in order; a trailing plain table (not a tensor, not a callable,
-- not a list of numbers) holds keyword options.
local function is_opts(v)
  if type(v) ~= 'table' or T.is_tensor(v) or v._is_variable or v._is_link then return false end
  local mt = getmetatable(v)
  if mt ~= nil and (mt.__call ~= nil or rawget(mt, '__name') ~= nil) then return false end
  if v[1] ~= nil then return false end
  return true
end
M.is_opts = is_opts

function M.args(fn, names, n, ...)
  local out = {}
  local last = n
  local a = { ... }
  while last > 0 and a[last] == nil do last = last - 1 end
  local opts
  if last > 0 and is_opts(a[last]) then
    opts = a[last]
    last = last - 1
  end
  if last > #names then
    error(string.format('%s: too many positional arguments (expected at most %d)', fn, #names), 3)
  end
  for i = 1, last do out[names[i]] = a[i] end
  if opts then
    local known = {}
    for _, k in ipairs(names) do known[k] = true end
    for k, v in pairs(opts) do
      if not known[k] then
        local list = {}
        for _, nm in ipairs(names) do list[#list + 1] = nm end
        error(string.format("%s: unknown option '%s' (expected one of: %s)", fn, tostring(k), table.concat(list, ', ')), 3)
      end
      if out[k] ~= nil then error(string.format('%s: %s given both positionally and in the options', fn, k), 3) end
      out[k] = v
    end
  end
  return out
end

-- Initializer for a weight (nil -> default) and for a bias (nil -> zeros).
function M.weight_init(init, fn, default)
  return I._get_initializer(init, fn, default)
end
function M.bias_init(init, fn)
  if init == nil then return I.Constant(0) end
  return I._get_initializer(init, fn)
end

-- A Parameter from an initializer (shape nil: lazy).
function M.param(init, shape)
  return Parameter(init, shape)
end

-- tuple(v, n): a number repeated n times, or a table copied.
function M.tuple(v, n)
  if type(v) == 'number' then
    local t = {}
    for i = 1, n do t[i] = v end
    return t
  end
  return v
end

-- Product of x's shape from axis `from` (1-based) on.
function M.size_from(shape, from)
  local s = 1
  for i = from, #shape do s = s * shape[i] end
  return s
end

function M.data(x)
  if T.is_tensor(x) then return x end
  if type(x) == 'table' and x._is_variable then return x._data end
  return nil
end

return M

-- functions/_checks.lua: argument checks shared by function families
-- (noise/_util.lua and normalization/_util.lua re-export them; not exported
-- into F).  `level` is the error level as seen by the caller of the check
-- (2: the function that called it), so the message points at user code.
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'

local K = {}

local floats = { float16 = true, float32 = true, float64 = true }

-- The float tensor of a Variable or tensor argument `name`, or an error.
function K.float_data(fn, name, v, level)
  local d = Variable.as_array(v)
  if not T.is_tensor(d) then
    error(string.format('%s: %s must be a Variable or a tensor (got %s)', fn, name, type(v)), (level or 2) + 1)
  end
  if not floats[d.dtype] then
    error(string.format('%s: %s must be a float tensor (float16, float32 or float64; got %s)', fn, name, d.dtype),
      (level or 2) + 1)
  end
  return d
end

-- An options table (nil: {}) whose keys are all in `allowed`, or an error.
function K.opts(fn, o, allowed, level)
  if o == nil then return {} end
  if type(o) ~= 'table' or getmetatable(o) ~= nil then
    error(string.format('%s: options must be a table (got %s)', fn, type(o)), (level or 2) + 1)
  end
  for k in pairs(o) do
    if not allowed[k] then error(string.format("%s: unknown option '%s'", fn, tostring(k)), (level or 2) + 1) end
  end
  return o
end

function K.same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

return K

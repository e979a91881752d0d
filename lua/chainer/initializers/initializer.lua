-- initializers/initializer.lua: the Initializer base class and get_fans.
--
-- An initializer is a callable object: init(array) fills `array` in place.
-- Its `dtype` (nil = any) is the dtype it insists on; generate_array uses it
-- to pick the dtype of a new array.
local T = require 'chainer.tensor'
local class = require 'chainer.class'

local Initializer = class.Object:extend('Initializer')
Initializer._is_initializer = true

function Initializer:init(dtype)
  self.dtype = dtype and T.dtype_name(dtype) or nil
end

Initializer.__call = function(self, array)
  if not T.is_tensor(array) then
    error(string.format('%s: expected a tensor to fill (got %s)', getmetatable(self).__name, type(array)), 2)
  end
  if self.dtype ~= nil and array.dtype ~= self.dtype then
    error(string.format('%s: the array is %s but this initializer makes %s', getmetatable(self).__name,
      array.dtype, self.dtype), 2)
  end
  self:fill(array)
  return array
end

function Initializer:fill(array)
  error(getmetatable(self).__name .. ': fill is not implemented', 2)
end

Initializer.__tostring = function(self)
  return getmetatable(self).__name .. (self.scale and ('(scale=' .. tostring(self.scale) .. ')') or '()')
end

-- fan_in, fan_out of a weight shape (out, in, k1, k2, ...), as Chainer.
local function get_fans(shape, fn)
  if type(shape) ~= 'table' or #shape < 2 then
    error(string.format('%s: the shape must have at least 2 dimensions (got %s)', fn or 'get_fans',
      type(shape) == 'table' and T.shape_str(shape) or tostring(shape)), 3)
  end
  local rfs = 1
  for i = 3, #shape do rfs = rfs * shape[i] end
  return shape[2] * rfs, shape[1] * rfs
end

-- A subclass Name(scale = default_scale, dtype): the constructor of the
-- scaled initializers (Normal, LeCunUniform, Orthogonal, Identity, ...).
local function scaled(name, default_scale)
  local cls = Initializer:extend(name)
  function cls:init(scale, dtype)
    Initializer.init(self, dtype)
    self.scale = scale or default_scale
  end
  return cls
end

-- For fill: the array must be float (the error at the line that called the
-- initializer).
local function check_float(array, fn)
  if not T.is_float_dtype(array.dtype) then
    error(fn .. ': the array must have a float dtype (got ' .. array.dtype .. ')', 4)
  end
end

return { Initializer = Initializer, get_fans = get_fans, scaled = scaled, check_float = check_float }

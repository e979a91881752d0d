-- initializers/uniform.lua: Uniform, LeCunUniform, GlorotUniform, HeUniform.
local T = require 'chainer.tensor'
local base = require 'chainer.initializers.initializer'
local Initializer, get_fans = base.Initializer, base.get_fans

local function uniform_fill(array, s, fn)
  if not T.is_float_dtype(array.dtype) then
    error(fn .. ': the array must have a float dtype (got ' .. array.dtype .. ')', 4)
  end
  array:uniform_(-s, s)
end

local function make(name, default_scale, bound)
  local cls = Initializer:extend(name)
  function cls:init(scale, dtype)
    Initializer.init(self, dtype)
    self.scale = scale or default_scale
  end
  function cls:fill(array) uniform_fill(array, bound(self.scale, array.shape, name), name) end
  return cls
end

return {
  -- Uniform(scale = 0.05): U[-scale, scale)
  Uniform = make('Uniform', 0.05, function(s) return s end),
  -- LeCunUniform: s = scale * sqrt(3 / fan_in)
  LeCunUniform = make('LeCunUniform', 1.0, function(s, shape, n)
    local fan_in = get_fans(shape, n)
    return s * math.sqrt(3 / fan_in)
  end),
  -- GlorotUniform: s = scale * sqrt(6 / (fan_in + fan_out))
  GlorotUniform = make('GlorotUniform', 1.0, function(s, shape, n)
    local fan_in, fan_out = get_fans(shape, n)
    return s * math.sqrt(6 / (fan_in + fan_out))
  end),
  -- HeUniform: s = scale * sqrt(6 / fan_in)
  HeUniform = make('HeUniform', 1.0, function(s, shape, n)
    local fan_in = get_fans(shape, n)
    return s * math.sqrt(6 / fan_in)
  end),
}

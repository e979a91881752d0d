-- initializers/uniform.lua: Uniform, LeCunUniform, GlorotUniform, HeUniform.
local base = require 'chainer.initializers.initializer'
local get_fans = base.get_fans

-- A scaled initializer filling with U[-s, s), s = bound(scale, shape, name).
local function make(name, default_scale, bound)
  local cls = base.scaled(name, default_scale)
  function cls:fill(array)
    local s = bound(self.scale, array.shape, name)
    base.check_float(array, name)
    array:uniform_(-s, s)
  end
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

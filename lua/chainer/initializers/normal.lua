-- initializers/normal.lua: Normal, LeCunNormal, GlorotNormal, HeNormal.
local args = require 'chainer._args'
local base = require 'chainer.initializers.initializer'
local get_fans = base.get_fans

-- A scaled initializer filling with N(0, std^2), std = std_of(self, shape,
-- name) (float arrays of any layout and device).
local function make(name, default_scale, std_of)
  local cls = base.scaled(name, default_scale)
  function cls:fill(array)
    local std = std_of(self, array.shape, name)
    base.check_float(array, name)
    array:normal_(0, std)
  end
  return cls
end

-- Normal(scale = 0.05): N(0, scale^2).
local Normal = make('Normal', 0.05, function(self) return self.scale end)

-- LeCunNormal(scale = 1): std = scale * sqrt(1 / fan_in).
local LeCunNormal = make('LeCunNormal', 1.0, function(self, shape, name)
  local fan_in = get_fans(shape, name)
  return self.scale * math.sqrt(1 / fan_in)
end)

-- GlorotNormal(scale = 1): std = scale * sqrt(2 / (fan_in + fan_out)).
local GlorotNormal = make('GlorotNormal', 1.0, function(self, shape, name)
  local fan_in, fan_out = get_fans(shape, name)
  return self.scale * math.sqrt(2 / (fan_in + fan_out))
end)

-- HeNormal(scale = 1, {fan_option = 'fan_in'}): std = scale * sqrt(2 / fan).
local HeNormal = make('HeNormal', 1.0, function(self, shape, name)
  local fan_in, fan_out = get_fans(shape, name)
  local fan = self.fan_option == 'fan_in' and fan_in or fan_out
  return self.scale * math.sqrt(2 / fan)
end)
local HE_SIGNATURE = args.signature { 'dtype', 'fan_option' }

-- Chainer's HeNormal(scale, dtype, fan_option); after scale positional or by name.
function HeNormal:init(scale, ...)
  local opts = args.parse_at(3, 'HeNormal', HE_SIGNATURE, select('#', ...), ...)
  base.Initializer.init(self, opts.dtype)
  self.scale = scale or 1.0
  self.fan_option = opts.fan_option or 'fan_in'
  if self.fan_option ~= 'fan_in' and self.fan_option ~= 'fan_out' then
    error("HeNormal: fan_option must be 'fan_in' or 'fan_out' (got " .. tostring(self.fan_option) .. ')', 3)
  end
end

return { Normal = Normal, LeCunNormal = LeCunNormal, GlorotNormal = GlorotNormal, HeNormal = HeNormal }

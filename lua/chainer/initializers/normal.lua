-- initializers/normal.lua: Normal, LeCunNormal, GlorotNormal, HeNormal.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local base = require 'chainer.initializers.initializer'
local Initializer, get_fans = base.Initializer, base.get_fans

-- Fills with N(0, std^2) (float arrays of any layout and device).
local function normal_fill(array, std, fn)
  if not T.is_float_dtype(array.dtype) then
    error(fn .. ': the array must have a float dtype (got ' .. array.dtype .. ')', 4)
  end
  array:normal_(0, std)
end

-- Normal(scale = 0.05): N(0, scale^2).
local Normal = Initializer:extend('Normal')
function Normal:init(scale, dtype)
  Initializer.init(self, dtype)
  self.scale = scale or 0.05
end
function Normal:fill(array) normal_fill(array, self.scale, 'Normal') end

-- LeCunNormal(scale = 1): std = scale * sqrt(1 / fan_in).
local LeCunNormal = Initializer:extend('LeCunNormal')
function LeCunNormal:init(scale, dtype)
  Initializer.init(self, dtype)
  self.scale = scale or 1.0
end
function LeCunNormal:fill(array)
  local fan_in = get_fans(array.shape, 'LeCunNormal')
  normal_fill(array, self.scale * math.sqrt(1 / fan_in), 'LeCunNormal')
end

-- GlorotNormal(scale = 1): std = scale * sqrt(2 / (fan_in + fan_out)).
local GlorotNormal = Initializer:extend('GlorotNormal')
function GlorotNormal:init(scale, dtype)
  Initializer.init(self, dtype)
  self.scale = scale or 1.0
end
function GlorotNormal:fill(array)
  local fan_in, fan_out = get_fans(array.shape, 'GlorotNormal')
  normal_fill(array, self.scale * math.sqrt(2 / (fan_in + fan_out)), 'GlorotNormal')
end

-- HeNormal(scale = 1, {fan_option = 'fan_in'}): std = scale * sqrt(2 / fan).
local HeNormal = Initializer:extend('HeNormal')
local HE_SIGNATURE = args.signature { 'dtype', 'fan_option' }

-- Chainer's HeNormal(scale, dtype, fan_option); after scale positional or by name.
function HeNormal:init(scale, ...)
  local opts = args.parse_at(3, 'HeNormal', HE_SIGNATURE, select('#', ...), ...)
  local dtype, fan_option = opts.dtype, opts.fan_option
  Initializer.init(self, dtype)
  self.scale = scale or 1.0
  self.fan_option = fan_option or 'fan_in'
  if self.fan_option ~= 'fan_in' and self.fan_option ~= 'fan_out' then
    error("HeNormal: fan_option must be 'fan_in' or 'fan_out' (got " .. tostring(self.fan_option) .. ')', 3)
  end
end
function HeNormal:fill(array)
  local fan_in, fan_out = get_fans(array.shape, 'HeNormal')
  local fan = self.fan_option == 'fan_in' and fan_in or fan_out
  normal_fill(array, self.scale * math.sqrt(2 / fan), 'HeNormal')
end

return { Normal = Normal, LeCunNormal = LeCunNormal, GlorotNormal = GlorotNormal, HeNormal = HeNormal }

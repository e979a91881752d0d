-- initializers/constant.lua: Constant, Zero, One, NaN, Identity.
local T = require 'chainer.tensor'
local base = require 'chainer.initializers.initializer'
local Initializer = base.Initializer

-- Constant(fill_value, dtype): a number or a tensor broadcast onto the array.
local Constant = Initializer:extend('Constant')
function Constant:init(fill_value, dtype)
  Initializer.init(self, dtype)
  if type(fill_value) ~= 'number' and not T.is_tensor(fill_value) then
    if type(fill_value) == 'table' then fill_value = T.array(fill_value, 'float64')
    else error('Constant: fill_value must be a number or a tensor (got ' .. type(fill_value) .. ')', 3) end
  end
  self.fill_value = fill_value
end
function Constant:fill(array)
  local v = self.fill_value
  if type(v) == 'number' then
    array:fill_(v)
  else
    local ok, err = pcall(function()
      local src = v:broadcast_to(array.shape)
      if src.ptr.dev ~= array.ptr.dev then src = src:to_device(array.ptr.dev) end
      array:copy_(src)
    end)
    if not ok then
      error(string.format('Constant: cannot fill an array of shape %s with a value of shape %s',
        T.shape_str(array.shape), T.shape_str(v.shape)), 3)
    end
  end
end
Constant.__tostring = function(self)
  local v = self.fill_value
  return 'Constant(' .. (type(v) == 'number' and tostring(v) or T.shape_str(v.shape)) .. ')'
end

local Zero = Constant:extend('Zero')
function Zero:init(dtype) Constant.init(self, 0, dtype) end

local One = Constant:extend('One')
function One:init(dtype) Constant.init(self, 1, dtype) end

local NaN = Constant:extend('NaN')
function NaN:init(dtype) Constant.init(self, 0 / 0, dtype) end

-- Identity(scale): scale * I for a square 2-d array.
local Identity = base.scaled('Identity', 1.0)
function Identity:fill(array)
  local s = array.shape
  if #s ~= 2 or s[1] ~= s[2] then
    error('Identity: the array must be a square matrix (got shape ' .. T.shape_str(s) .. ')', 3)
  end
  array:copy_(T.eye(s[1], s[1], 0, array.dtype, array.ptr.dev) * self.scale)
end

return { Constant = Constant, Zero = Zero, One = One, NaN = NaN, Identity = Identity }

-- chainer.utils.array: Chainer's small array helpers of chainer.utils
-- (force_array, force_type, size_of_shape, sum_to), on chainer.tensor.
-- Lua has one number type, so where Chainer tells a Python/NumPy scalar
-- from an ndarray these tell a Lua number (or boolean) from a tensor.
local ffi = require 'ffi'
local T = require 'chainer.tensor'

local M = {}

local function is_scalar(v) return type(v) == 'number' or type(v) == 'boolean' end

local function describe(v)
  if type(v) == 'table' and v._is_variable then return 'a Variable' end
  return type(v)
end

-- force_array(x, dtype = nil): a 0-d tensor for a scalar (of `dtype`, else
-- the default float dtype), x itself for a tensor (cast when dtype is given
-- and differs; no copy when it is the same).
function M.force_array(x, dtype)
  if dtype ~= nil then dtype = T.dtype_name(dtype) end
  if is_scalar(x) then return T.array(x, dtype) end
  if not T.is_tensor(x) then
    error(string.format('force_array: x must be a number, a boolean or a tensor (got %s)', describe(x)), 2)
  end
  if dtype == nil or x.dtype == dtype then return x end
  return x:astype(dtype)
end

-- A Lua number as a scalar of `dtype` would hold it (NumPy's dtype.type(v)).
local float32_box = ffi.new('float[1]')
local function scalar_as(dtype, v)
  if dtype == 'bool' then
    if type(v) == 'boolean' then return v end
    return v ~= 0
  end
  if type(v) == 'boolean' then v = v and 1 or 0 end
  if dtype == 'float64' then return v end
  if dtype == 'float32' then
    float32_box[0] = v
    return tonumber(float32_box[0])
  end
  if dtype == 'float16' then return T.array(v, 'float16'):item() end
  -- integers truncate toward zero and wrap as the C type does
  return T.array(v, 'float64'):astype(dtype):item()
end

-- force_type(dtype, value): a scalar converted to what `dtype` holds (a Lua
-- number, or a boolean for 'bool'); a tensor cast to dtype when it differs.
function M.force_type(dtype, value)
  dtype = T.dtype_name(dtype)
  if is_scalar(value) then return scalar_as(dtype, value) end
  if not T.is_tensor(value) then
    error(string.format('force_type: value must be a number, a boolean or a tensor (got %s)', describe(value)), 2)
  end
  if value.dtype == dtype then return value end
  return value:astype(dtype)
end

-- size_of_shape(shape): the number of elements of an array of that shape
-- (1 for the empty shape of a 0-d array).
function M.size_of_shape(shape)
  if type(shape) ~= 'table' or getmetatable(shape) ~= nil then
    error(string.format('size_of_shape: shape must be a table of integers (got %s)', describe(shape)), 2)
  end
  local size = 1
  for i = 1, #shape do
    local n = shape[i]
    if type(n) ~= 'number' or n ~= math.floor(n) or n < 0 then
      error(string.format('size_of_shape: shape[%d] must be a non-negative integer (got %s)', i, tostring(n)), 2)
    end
    size = size * n
  end
  return size
end

-- sum_to(x, shape): sums the tensor x down to `shape` (the gradient of
-- broadcasting to x's shape); x itself when it has that shape already.
-- For Variables use F.sum_to, which is differentiable.
function M.sum_to(x, shape)
  if not T.is_tensor(x) then
    error(string.format('sum_to: x must be a tensor (got %s%s)', describe(x),
      describe(x) == 'a Variable' and '; use chainer.functions.sum_to for Variables' or ''), 2)
  end
  if type(shape) ~= 'table' then
    error(string.format('sum_to: shape must be a table of integers (got %s)', type(shape)), 2)
  end
  local same = #shape == x.ndim
  if same then
    local xs = x.shape
    for i = 1, #shape do if xs[i] ~= shape[i] then same = false break end end
  end
  if same then return x end
  return T.sum_to(x, shape)
end

return M

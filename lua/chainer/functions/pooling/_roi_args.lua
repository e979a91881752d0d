-- functions/pooling/_roi_args.lua: the arguments of Chainer 7's ROI
-- functions that take keyword options (roi_max_pooling_2d,
-- roi_average_pooling_2d, roi_max_align_2d; not exported into F), and the
-- dtype round trip and node copies every ROI function shares:
--   fn(x, rois, roi_indices, outsize, spatial_scale[, sampling_ratio])
-- each after rois positional or in a trailing options table,
--   fn(x, rois, roi_indices, {outsize = {2, 3}, spatial_scale = 0.5})
-- rois (R, 4) = (y_min, x_min, y_max, x_max), roi_indices (R) integers.
local T = require 'chainer.tensor'
local args = require 'chainer._args'

local A = {}

-- v, or an error (at level) unless it is a positive integer.
local function positive_int(fn, name, v, level)
  if type(v) ~= 'number' or v ~= math.floor(v) or v < 1 then
    error(string.format('%s: %s must be a positive integer (got %s)', fn, name, tostring(v)), level + 1)
  end
  return v
end
A.positive_int = positive_int

-- An integer or a pair {h, w} of positive integers, as two numbers.
function A.pair(fn, name, v, level)
  level = (level or 2) + 1
  if type(v) == 'number' then
    positive_int(fn, name, v, level)
    return v, v
  elseif type(v) == 'table' and getmetatable(v) == nil and #v == 2 then
    return positive_int(fn, name .. '[1]', v[1], level), positive_int(fn, name .. '[2]', v[2], level)
  end
  error(string.format('%s: %s must be an integer or a table {h, w} (got %s)', fn, name, tostring(v)), level)
end

-- The kernels take float32 / float64: float16 is computed in float32 and
-- rounded back (as the other ROI functions).
function A.f32(x)
  if x.dtype == 'float16' then return x:astype('float32'), 'float16' end
  return x, nil
end
function A.back(y, dt) if dt then return y:astype(dt) end return y end

-- A new node of class cls with from's fields keys: a function node's
-- gradient node (the same ROIs, sizes, argmax), or the first node of a call
-- from its parsed arguments.
function A.node(cls, from, keys)
  local f = setmetatable({}, cls)
  for _, k in ipairs(keys) do f[k] = from[k] end
  return f
end

-- Returns a table with x, rois (R, 4) tensor, roi_indices (R) tensor,
-- outh, outw, spatial_scale and whatever else sig names (unchecked).
-- sig lists the names after rois in Chainer's order.
function A.parse(fn, sig, x, rois, n, ...)
  local level = 3
  local a = args.parse_at(2, fn, sig, n, ...)
  local xd = args.float_array(fn, 'x', x, level)
  if xd.ndim ~= 4 then
    error(string.format('%s: x must be 4-d (N, C, H, W), got %d-d with shape %s', fn, xd.ndim,
      T.shape_str(xd.shape)), level)
  end
  local rd = args.float_array(fn, 'rois', rois, level)
  if rd.ndim ~= 2 or rd.shape[2] ~= 4 then
    error(string.format('%s: rois must be (R, 4) (y_min, x_min, y_max, x_max), got shape %s', fn,
      T.shape_str(rd.shape)), level)
  end
  if a.roi_indices == nil then error(fn .. ': roi_indices is required', level) end
  local idx = args.int_array(fn, 'roi_indices', a.roi_indices, level)
  if idx.ndim ~= 1 or idx.shape[1] ~= rd.shape[1] then
    error(string.format('%s: roi_indices must be (R) with R = %d (the rows of rois), got shape %s', fn,
      rd.shape[1], T.shape_str(idx.shape)), level)
  end
  if a.outsize == nil then error(fn .. ': outsize is required', level) end
  a.outh, a.outw = A.pair(fn, 'outsize', a.outsize, level - 1)
  local scale = a.spatial_scale
  if type(scale) ~= 'number' or scale <= 0 then
    error(string.format('%s: spatial_scale must be a positive number (got %s)', fn, tostring(scale)), level)
  end
  a.x, a.rois, a.roi_indices = x, rd, idx
  return a
end

return A

-- functions/pooling/_roi.lua: argument handling shared by the ROI pooling
-- functions (not exported into F).
--
-- Chainer's current form:  fn(x, rois, roi_indices, outsize, spatial_scale)
--   rois (R, 4) = (y_min, x_min, y_max, x_max), roi_indices (R) integers
-- Chainer 1.x form:        fn(x, rois, outh, outw, spatial_scale)
--   rois (R, 5) = (batch_index, x_min, y_min, x_max, y_max)
-- The 1.x form is recognised by a number in the third position and turned
-- into the current one.
local T = require 'chainer.tensor'
local args = require 'chainer._args'

local R = {}

local function posint(fn, name, v, level)
  if type(v) ~= 'number' or v ~= math.floor(v) or v < 1 then
    error(string.format('%s: %s must be a positive integer (got %s)', fn, name, tostring(v)), level + 1)
  end
  return v
end

-- Returns x (tensor), rois (R, 4) tensor, roi_indices (R) tensor, outh,
-- outw, spatial_scale and the trailing argument (options, or nil) for the
-- caller to check.
function R.parse(fn, x, rois, a3, a4, a5, a6, level)
  level = (level or 2) + 1
  local xd = args.float_array(fn, 'x', x, level)
  if xd.ndim ~= 4 then
    error(string.format('%s: x must be 4-d (N, C, H, W), got %d-d with shape %s', fn, xd.ndim,
      T.shape_str(xd.shape)), level)
  end
  local rd = args.float_array(fn, 'rois', rois, level)
  local idx, outh, outw, scale, opts
  if type(a3) == 'number' then
    -- Chainer 1.x: (x, rois, outh, outw, spatial_scale)
    if rd.ndim ~= 2 or rd.shape[2] ~= 5 then
      error(string.format('%s: with (outh, outw, spatial_scale) rois must be (R, 5) (batch_index, x_min, y_min, '
        .. 'x_max, y_max), got shape %s', fn, T.shape_str(rd.shape)), level)
    end
    outh, outw, scale, opts = posint(fn, 'outh', a3, level), posint(fn, 'outw', a4, level), a5, a6
    local bi = T.take(rd, T.array({ 0 }, 'int64'), 1):reshape({ rd.shape[1] })
    if T.any(T.ne(bi, T.floor(bi))):item() then
      error(string.format('%s: the batch indices in rois[:, 0] must be integers', fn), level)
    end
    idx = bi:astype('int64')
    rd = T.take(rd, T.array({ 2, 1, 4, 3 }, 'int64'), 1)
  else
    if rd.ndim ~= 2 or rd.shape[2] ~= 4 then
      error(string.format('%s: rois must be (R, 4) (y_min, x_min, y_max, x_max), got shape %s', fn,
        T.shape_str(rd.shape)), level)
    end
    idx = args.int_array(fn, 'roi_indices', a3, level)
    if idx.ndim ~= 1 or idx.shape[1] ~= rd.shape[1] then
      error(string.format('%s: roi_indices must be (R) with R = %d (the rows of rois), got shape %s', fn,
        rd.shape[1], T.shape_str(idx.shape)), level)
    end
    local outsize
    outsize, scale, opts = a4, a5, a6
    if type(outsize) == 'number' then
      outh, outw = posint(fn, 'outsize', outsize, level), outsize
    elseif type(outsize) == 'table' and getmetatable(outsize) == nil and #outsize == 2 then
      outh, outw = posint(fn, 'outsize[1]', outsize[1], level), posint(fn, 'outsize[2]', outsize[2], level)
    else
      error(string.format('%s: outsize must be an integer or a table {outh, outw} (got %s)', fn,
        tostring(outsize)), level)
    end
  end
  if type(scale) ~= 'number' or scale <= 0 then
    error(string.format('%s: spatial_scale must be a positive number (got %s)', fn, tostring(scale)), level)
  end
  return xd, rd, idx, outh, outw, scale, opts
end

return R

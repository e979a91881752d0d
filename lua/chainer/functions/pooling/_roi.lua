-- functions/pooling/_roi.lua: argument handling shared by the ROI pooling
-- functions (not exported into F).
--
-- The roi_*_2d form:  fn(x, rois, roi_indices, outsize, spatial_scale)
--   rois (R, 4) = (y_min, x_min, y_max, x_max), roi_indices (R) integers
-- roi_pooling_2d's form (Chainer 7 keeps it from 1.x):
--                      fn(x, rois, outh, outw, spatial_scale)
--   rois (R, 5) = (batch_index, x_min, y_min, x_max, y_max)
-- The second form is recognised by a number in the third position (or an
-- `outh` option) and turned into the first.  Every argument after rois may
-- also come by name in a trailing options table, as Chainer's keywords.
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local posint = require('chainer.functions.pooling._roi_args').positive_int

local R = {}

-- Chainer's keyword arguments: a trailing options table may name the
-- arguments after rois (roi_indices, outsize, spatial_scale; or outh, outw,
-- spatial_scale in the 1.x form).  Returns the four positional slots with
-- the named ones filled in, and the options it did not name (nil if none).
local CURRENT = { 'roi_indices', 'outsize', 'spatial_scale' }
local LEGACY = { 'outh', 'outw', 'spatial_scale' }

local function keywords(fn, a3, a4, a5, a6, level)
  local pos = { a3, a4, a5, a6 }
  local n = 4
  while n > 0 and pos[n] == nil do n = n - 1 end
  if n == 0 or not args.is_options(pos[n]) then return a3, a4, a5, a6, nil end
  local kw = pos[n]
  pos[n] = nil
  local names = (type(pos[1]) == 'number' or kw.outh ~= nil) and LEGACY or CURRENT
  local rest
  for k, v in pairs(kw) do
    local slot
    for i, name in ipairs(names) do if name == k then slot = i end end
    if slot then
      if pos[slot] ~= nil then
        error(string.format('%s: %s given both positionally and in the options', fn, k), level)
      end
      pos[slot] = v
    else
      rest = rest or {}
      rest[k] = v
    end
  end
  if pos[4] ~= nil and rest ~= nil then
    error(string.format('%s: options given both after a sixth positional argument and in a table', fn), level)
  end
  return pos[1], pos[2], pos[3], pos[4] or rest
end

-- Returns x (tensor), rois (R, 4) tensor, roi_indices (R) tensor, outh,
-- outw, spatial_scale and the trailing argument (options not named above,
-- or a sixth positional value, or nil) for the caller to check.
function R.parse(fn, x, rois, a3, a4, a5, a6, level)
  level = (level or 2) + 1
  local xd = args.float_array(fn, 'x', x, level)
  if xd.ndim ~= 4 then
    error(string.format('%s: x must be 4-d (N, C, H, W), got %d-d with shape %s', fn, xd.ndim,
      T.shape_str(xd.shape)), level)
  end
  a3, a4, a5, a6 = keywords(fn, a3, a4, a5, a6, level + 1)
  local rd = args.float_array(fn, 'rois', rois, level)
  local idx, outh, outw, scale, opts
  if type(a3) == 'number' then
    -- roi_pooling_2d's (x, rois, outh, outw, spatial_scale)
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

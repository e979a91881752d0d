-- functions/pooling/_roi_args.lua: the argument checks of the ROI pooling
-- functions (not exported into F), and the dtype round trip and node copies
-- every ROI function shares.
--
-- Chainer 7's form, every ROI function:
--   fn(x, rois, roi_indices, outsize, spatial_scale[, sampling_ratio])
--   rois (R, 4) = (y_min, x_min, y_max, x_max), roi_indices (R) integers;
--   each argument after rois positional or in a trailing options table,
--   fn(x, rois, roi_indices, {outsize = {2, 3}, spatial_scale = 0.5})
--   (A.parse: roi_max_pooling_2d, roi_average_pooling_2d, roi_max_align_2d).
-- roi_pooling_2d's form (Chainer 7 keeps it from 1.x):
--   fn(x, rois, outh, outw, spatial_scale)
--   rois (R, 5) = (batch_index, x_min, y_min, x_max, y_max)
--   recognised by a number in the third position (or an `outh` option) and
--   turned into the first (A.parse_either_form: roi_pooling_2d and
--   roi_average_align_2d).
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


-- A new node of class cls with from's fields keys: a function node's
-- gradient node (the same ROIs, sizes, argmax), or the first node of a call
-- from its parsed arguments.
function A.node(cls, from, keys)
  local f = setmetatable({}, cls)
  for _, k in ipairs(keys) do f[k] = from[k] end
  return f
end

-- Every ROI node's forward: the kernel call call(x) on the input in float32
-- / float64, the result in the input's dtype (pooling's shared wrapper).
A.compute = require('chainer.functions.pooling._util').compute

-- Gives each class in grads (class -> the class of its gradient node) a
-- backward that applies a new gradient node, with the node's fields keys,
-- to gy: every ROI function's gradients are such chains.
function A.set_gradients(keys, grads)
  for cls, grad_cls in pairs(grads) do
    cls.backward = function(self, idx, gys) return { A.node(grad_cls, self, keys):apply({ gys[1] })[1] } end
  end
end

-- ---- the checks both argument forms share ------------------------------
-- (level: as error()'s, seen from the parser that calls them)
-- x: a float (N, C, H, W) tensor.
local function check_x(fn, x, level)
  level = level + 1
  local xd = args.float_array(fn, 'x', x, level)
  if xd.ndim ~= 4 then
    error(string.format('%s: x must be 4-d (N, C, H, W), got %d-d with shape %s', fn, xd.ndim,
      T.shape_str(xd.shape)), level)
  end
  return xd
end

-- rois (R, 4) rows (y_min, x_min, y_max, x_max).
local function check_rois(fn, rd, level)
  level = level + 1
  if rd.ndim ~= 2 or rd.shape[2] ~= 4 then
    error(string.format('%s: rois must be (R, 4) (y_min, x_min, y_max, x_max), got shape %s', fn,
      T.shape_str(rd.shape)), level)
  end
end

-- roi_indices: an integer (R) tensor, R the rows of rois.
local function check_roi_indices(fn, roi_indices, rd, level)
  level = level + 1
  local idx = args.int_array(fn, 'roi_indices', roi_indices, level)
  if idx.ndim ~= 1 or idx.shape[1] ~= rd.shape[1] then
    error(string.format('%s: roi_indices must be (R) with R = %d (the rows of rois), got shape %s', fn,
      rd.shape[1], T.shape_str(idx.shape)), level)
  end
  return idx
end

local function check_spatial_scale(fn, scale, level)
  level = level + 1
  if type(scale) ~= 'number' or scale <= 0 then
    error(string.format('%s: spatial_scale must be a positive number (got %s)', fn, tostring(scale)), level)
  end
end

-- Returns a table with x, rois (R, 4) tensor, roi_indices (R) tensor,
-- outh, outw, spatial_scale and whatever else sig names (unchecked).
-- sig lists the names after rois in Chainer's order.
function A.parse(fn, sig, x, rois, n, ...)
  local level = 3
  local a = args.parse_at(2, fn, sig, n, ...)
  check_x(fn, x, level)
  local rd = args.float_array(fn, 'rois', rois, level)
  check_rois(fn, rd, level)
  if a.roi_indices == nil then error(fn .. ': roi_indices is required', level) end
  local idx = check_roi_indices(fn, a.roi_indices, rd, level)
  if a.outsize == nil then error(fn .. ': outsize is required', level) end
  a.outh, a.outw = A.pair(fn, 'outsize', a.outsize, level - 1)
  check_spatial_scale(fn, a.spatial_scale, level)
  a.x, a.rois, a.roi_indices = x, rd, idx
  return a
end

-- ---- roi_pooling_2d and roi_average_align_2d: both argument forms -------
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
function A.parse_either_form(fn, x, rois, a3, a4, a5, a6, level)
  level = (level or 2) + 1
  local xd = check_x(fn, x, level)
  a3, a4, a5, a6 = keywords(fn, a3, a4, a5, a6, level + 1)
  local rd = args.float_array(fn, 'rois', rois, level)
  local idx, outh, outw, scale, opts
  if type(a3) == 'number' then
    -- roi_pooling_2d's (x, rois, outh, outw, spatial_scale)
    if rd.ndim ~= 2 or rd.shape[2] ~= 5 then
      error(string.format('%s: with (outh, outw, spatial_scale) rois must be (R, 5) (batch_index, x_min, y_min, '
        .. 'x_max, y_max), got shape %s', fn, T.shape_str(rd.shape)), level)
    end
    outh, outw, scale, opts = positive_int(fn, 'outh', a3, level), positive_int(fn, 'outw', a4, level), a5, a6
    local bi = T.take(rd, { 0 }, 1):reshape({ rd.shape[1] })
    if T.any(T.ne(bi, T.floor(bi))):item() then
      error(string.format('%s: the batch indices in rois[:, 0] must be integers', fn), level)
    end
    idx = bi:astype('int64')
    rd = T.take(rd, { 2, 1, 4, 3 }, 1)
  else
    check_rois(fn, rd, level)
    idx = check_roi_indices(fn, a3, rd, level)
    local outsize
    outsize, scale, opts = a4, a5, a6
    if type(outsize) == 'number' then
      outh, outw = positive_int(fn, 'outsize', outsize, level), outsize
    elseif type(outsize) == 'table' and getmetatable(outsize) == nil and #outsize == 2 then
      outh = positive_int(fn, 'outsize[1]', outsize[1], level)
      outw = positive_int(fn, 'outsize[2]', outsize[2], level)
    else
      error(string.format('%s: outsize must be an integer or a table {outh, outw} (got %s)', fn,
        tostring(outsize)), level)
    end
  end
  check_spatial_scale(fn, scale, level)
  return xd, rd, idx, outh, outw, scale, opts
end

return A

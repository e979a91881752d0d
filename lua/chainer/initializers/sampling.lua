-- initializers/sampling.lua: UpsamplingDeconvFilter(interpolation =
-- 'linear', dtype) and DownsamplingConvFilter(interpolation = 'linear',
-- dtype), the bilinear (n-linear) resampling kernels of Long et al.'s FCN,
-- as Chainer's initializers/sampling.py.
--
-- The array is (in_c, out_c, k, ..., k) with equal spatial sizes k and
-- out_c either in_c or 1.  Everything is 0 except the channel pairs (i, i)
-- (or (i, 0) when out_c is 1), which get the filter
--   f(p) = prod over axes of (1 - |p_axis - center| / factor),
--   factor = floor((k + 1) / 2), center = factor - 1 (k odd) or factor - 0.5 (k even);
-- the downsampling filter is divided by its sum (it averages).  Meant for a
-- deconvolution (upsampling) or convolution (downsampling) with stride
-- factor.
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local base = require 'chainer.initializers.initializer'
local Initializer = base.Initializer

local M = {}

local SIGNATURE = args.signature { 'interpolation', 'dtype' }

local SamplingFilter = Initializer:extend('SamplingFilter')

local function sampling_init(self, cls_name, upsampling, ...)
  local a = args.parse(cls_name, SIGNATURE, select('#', ...), ...)
  local interpolation = a.interpolation == nil and 'linear' or a.interpolation
  if interpolation ~= 'linear' then
    error(string.format("%s: unsupported interpolation method '%s' (only 'linear')", cls_name, tostring(interpolation)),
      4)
  end
  Initializer.init(self, a.dtype)
  self.interpolation, self.upsampling = interpolation, upsampling
end

-- The k^ndim filter as a flat Lua array in C order.
local function linear_filter(k, ndim, upsampling)
  local factor = math.floor((k + 1) / 2)
  local center = (k % 2 == 1) and (factor - 1) or (factor - 0.5)
  local axis = {}
  for p = 0, k - 1 do axis[p + 1] = 1 - math.abs(p - center) / factor end
  local filt = { 1 }
  for _ = 1, ndim do
    local nxt = {}
    for _, v in ipairs(filt) do
      for p = 1, k do nxt[#nxt + 1] = v * axis[p] end
    end
    filt = nxt
  end
  if not upsampling then
    local sum = 0
    for _, v in ipairs(filt) do sum = sum + v end
    for i, v in ipairs(filt) do filt[i] = v / sum end
  end
  return filt
end

function SamplingFilter:fill(array)
  local name = getmetatable(self).__name
  local shape = array.shape
  if #shape < 3 then
    error(string.format('%s: the array must be (in_c, out_c, k, ...) with at least one spatial axis, got shape %s',
      name, T.shape_str(shape)), 3)
  end
  base.check_float(array, name)
  local in_c, out_c, k = shape[1], shape[2], shape[3]
  if out_c ~= in_c and out_c ~= 1 then
    error(string.format('%s: out_c (shape[2] = %d) must equal in_c (shape[1] = %d) or be 1', name, out_c, in_c), 3)
  end
  for i = 4, #shape do
    if shape[i] ~= k then
      error(string.format('%s: the spatial sizes must all be equal, got shape %s', name, T.shape_str(shape)), 3)
    end
  end
  local filt = linear_filter(k, #shape - 2, self.upsampling)
  local n = #filt
  local values = {}
  for i = 1, in_c * out_c * n do values[i] = 0 end
  for c = 0, in_c - 1 do
    local o = out_c == 1 and 0 or c
    local at = (c * out_c + o) * n
    for j = 1, n do values[at + j] = filt[j] end
  end
  local full = T.array(values, 'float64'):reshape(shape):astype(array.dtype)
  if array.ptr.dev ~= full.ptr.dev then full = full:to_device(array.ptr.dev) end
  array:copy_(full)
end

local UpsamplingDeconvFilter = SamplingFilter:extend('UpsamplingDeconvFilter')
function UpsamplingDeconvFilter:init(...) sampling_init(self, 'UpsamplingDeconvFilter', true, ...) end

local DownsamplingConvFilter = SamplingFilter:extend('DownsamplingConvFilter')
function DownsamplingConvFilter:init(...) sampling_init(self, 'DownsamplingConvFilter', false, ...) end

M.UpsamplingDeconvFilter, M.DownsamplingConvFilter = UpsamplingDeconvFilter, DownsamplingConvFilter
return M

-- functions/pooling/roi_average_align_2d.lua: F.roi_average_align_2d
-- (ROIAlign, He et al.'s Mask R-CNN, with average pooling in each bin).
--
--   F.roi_average_align_2d(x, rois, roi_indices, outsize, spatial_scale,
--                          {sampling_ratio = nil})
--
-- A ROI (y_min, x_min, y_max, x_max) * spatial_scale (not rounded; height
-- and width at least 1) is split into outsize bins; each bin averages
-- sampling_ratio (int or {h, w}; default ceil(roi size / outsize)) samples
-- per axis at the centres of a regular sub-grid, each read by bilinear
-- interpolation (points more than one cell outside count as 0, points
-- within it are clamped to the border), as Chainer computes it.  Linear in
-- x: the gradient is the adjoint kernel (ROIAverageAlign2DGrad) whose own
-- gradient is the forward again.  rois and roi_indices get no gradient.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local ROIArgs = require 'chainer.functions.pooling._roi_args'

local C = T.C

local M = {}

local OPTIONS = args.accept { 'sampling_ratio' }

local Align = FunctionNode:extend('ROIAverageAlign2D')
local AlignGrad = FunctionNode:extend('ROIAverageAlign2DGrad')
M.ROIAverageAlign2D, M.ROIAverageAlign2DGrad = Align, AlignGrad

local KEPT = { 'rois', 'roi_indices', 'outh', 'outw', 'spatial_scale', 'sh', 'sw', 'x_shape' }
ROIArgs.set_gradients(KEPT, { [Align] = AlignGrad, [AlignGrad] = Align })

function Align:forward(inputs)
  self.x_shape = inputs[1].shape
  return { ROIArgs.compute(inputs[1], function(x)
    return C.ch_roi_average_align_2d(x.ptr, self.rois.ptr, self.roi_indices.ptr, self.outh, self.outw,
      self.spatial_scale, self.sh, self.sw, T.box)
  end) }
end

function AlignGrad:forward(inputs)
  local s = self.x_shape
  return { ROIArgs.compute(inputs[1], function(g)
    return C.ch_roi_average_align_2d_backward(g.ptr, self.rois.ptr, self.roi_indices.ptr, s[1], s[3], s[4],
      self.spatial_scale, self.sh, self.sw, T.box)
  end) }
end

local function ratio(v)
  local fn = 'roi_average_align_2d'
  if v == nil or v == false then return 0, 0 end
  local a, b
  if type(v) == 'number' then a, b = v, v
  elseif type(v) == 'table' and getmetatable(v) == nil and #v == 2 then a, b = v[1], v[2]
  else error(fn .. ': sampling_ratio must be an integer or a table {h, w} (got ' .. tostring(v) .. ')', 3) end
  for _, n in ipairs({ a, b }) do
    if type(n) ~= 'number' or n ~= math.floor(n) or n < 1 then
      error(fn .. ': sampling_ratio must hold positive integers (got ' .. tostring(n) .. ')', 3)
    end
  end
  return a, b
end

function M.roi_average_align_2d(x, rois, a3, a4, a5, a6)
  local xd, rd, idx, outh, outw, scale, opts = ROIArgs.parse_either_form('roi_average_align_2d', x, rois, a3, a4, a5, a6, 2)
  -- sampling_ratio comes positionally (Chainer's sixth argument) or by name
  local sr = opts
  if args.is_options(opts) then sr = args.options('roi_average_align_2d', opts, OPTIONS).sampling_ratio end
  local f = setmetatable({}, Align)
  f.rois, f.roi_indices, f.outh, f.outw, f.spatial_scale = rd, idx, outh, outw, scale
  f.sh, f.sw = ratio(sr)
  return f:apply({ x })[1]
end

return M

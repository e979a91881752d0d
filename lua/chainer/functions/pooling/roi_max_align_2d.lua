-- functions/pooling/roi_max_align_2d.lua: F.roi_max_align_2d (ROIAlign,
-- He et al.'s Mask R-CNN, with max pooling in each bin).
--
--   F.roi_max_align_2d(x, rois, roi_indices, outsize, spatial_scale,
--                      sampling_ratio)      (sampling_ratio optional)
--
-- The sample points are those of F.roi_average_align_2d (a ROI
-- (y_min, x_min, y_max, x_max) * spatial_scale, not rounded, split into
-- outsize bins of sampling_ratio (int or {h, w}; default ceil(roi size /
-- outsize)) bilinear samples per axis); each output is the largest sample
-- of its bin, -inf when no sample lies within a cell of the image (as in
-- Chainer).  Only x gets a gradient: gy goes to the four bilinear
-- neighbours of each bin's argmax sample (ROIMaxAlign2DScatter), whose own
-- gradient is the matching interpolation (ROIMaxAlign2DGather).
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local ROIArgs = require 'chainer.functions.pooling._roi_args'

local C, wrap = T.C, T.wrap

local M = {}

local FN = 'roi_max_align_2d'
local SIGNATURE = { 'roi_indices', 'outsize', 'spatial_scale', 'sampling_ratio' }
local CALL = { 'rois', 'roi_indices', 'outh', 'outw', 'spatial_scale' }
local KEPT = { 'rois', 'roi_indices', 'argmax', 'spatial_scale', 'sh', 'sw', 'x_shape' }

local argmax_box = ffi.new('ch_tensor*[1]')

local Align = FunctionNode:extend('ROIMaxAlign2D')
local Scatter = FunctionNode:extend('ROIMaxAlign2DScatter')
local Gather = FunctionNode:extend('ROIMaxAlign2DGather')
M.ROIMaxAlign2D, M.ROIMaxAlign2DScatter, M.ROIMaxAlign2DGather = Align, Scatter, Gather

ROIArgs.set_gradients(KEPT, { [Align] = Scatter, [Scatter] = Gather, [Gather] = Scatter })

function Align:forward(inputs)
  self.x_shape = inputs[1].shape
  local y = ROIArgs.compute(inputs[1], function(x)
    return C.ch_roi_max_align_2d(x.ptr, self.rois.ptr, self.roi_indices.ptr, self.outh, self.outw,
      self.spatial_scale, self.sh, self.sw, T.box, argmax_box)
  end)
  self.argmax = wrap(argmax_box[0])
  return { y }
end

function Scatter:forward(inputs)
  local s = self.x_shape
  return { ROIArgs.compute(inputs[1], function(g)
    return C.ch_roi_max_align_2d_scatter(g.ptr, self.rois.ptr, self.roi_indices.ptr, self.argmax.ptr, s[1],
      s[3], s[4], self.spatial_scale, self.sh, self.sw, T.box)
  end) }
end

function Gather:forward(inputs)
  return { ROIArgs.compute(inputs[1], function(x)
    return C.ch_roi_max_align_2d_gather(x.ptr, self.rois.ptr, self.roi_indices.ptr, self.argmax.ptr,
      self.spatial_scale, self.sh, self.sw, T.box)
  end) }
end

function M.roi_max_align_2d(x, rois, ...)
  local a = ROIArgs.parse(FN, SIGNATURE, x, rois, select('#', ...), ...)
  local f = ROIArgs.node(Align, a, CALL)
  -- sampling_ratio nil: ceil(roi size / outsize) samples, chosen per ROI (0 for the kernel)
  f.sh, f.sw = 0, 0
  if a.sampling_ratio ~= nil then f.sh, f.sw = ROIArgs.pair(FN, 'sampling_ratio', a.sampling_ratio) end
  return f:apply({ x })[1]
end

return M

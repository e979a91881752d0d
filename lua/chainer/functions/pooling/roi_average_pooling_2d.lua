-- functions/pooling/roi_average_pooling_2d.lua: F.roi_average_pooling_2d
-- (Chainer 7's ROI average pooling).
--
--   F.roi_average_pooling_2d(x, rois, roi_indices, outsize, spatial_scale)
--
-- The bins are those of F.roi_max_pooling_2d (ROI corners scaled and
-- rounded half to even, max(end - start, 1) cells, bin i covering
-- [floor(i h/outh), ceil((i+1) h/outh)) clipped to the image); each output
-- is the mean of its bin's cells, 0 for a bin outside the image.  Linear
-- in x: the gradient is the adjoint kernel (ROIAveragePooling2DGrad, which
-- spreads gy / bin size over the bin), whose own gradient is the forward
-- again.  rois and roi_indices get no gradient.
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local ROIArgs = require 'chainer.functions.pooling._roi_args'

local C = T.C

local M = {}

local SIGNATURE = { 'roi_indices', 'outsize', 'spatial_scale' }
local CALL = { 'rois', 'roi_indices', 'outh', 'outw', 'spatial_scale' }
local KEPT = { 'rois', 'roi_indices', 'outh', 'outw', 'spatial_scale', 'x_shape' }

local Pool = FunctionNode:extend('ROIAveragePooling2D')
local PoolGrad = FunctionNode:extend('ROIAveragePooling2DGrad')
M.ROIAveragePooling2D, M.ROIAveragePooling2DGrad = Pool, PoolGrad

ROIArgs.set_gradients(KEPT, { [Pool] = PoolGrad, [PoolGrad] = Pool })

function Pool:forward(inputs)
  self.x_shape = inputs[1].shape
  return { ROIArgs.compute(inputs[1], function(x)
    return C.ch_roi_average_pooling_2d(x.ptr, self.rois.ptr, self.roi_indices.ptr, self.outh, self.outw,
      self.spatial_scale, T.box)
  end) }
end

function PoolGrad:forward(inputs)
  local s = self.x_shape
  return { ROIArgs.compute(inputs[1], function(g)
    return C.ch_roi_average_pooling_2d_backward(g.ptr, self.rois.ptr, self.roi_indices.ptr, s[1], s[3], s[4],
      self.spatial_scale, T.box)
  end) }
end

function M.roi_average_pooling_2d(x, rois, ...)
  local a = ROIArgs.parse('roi_average_pooling_2d', SIGNATURE, x, rois, select('#', ...), ...)
  return ROIArgs.node(Pool, a, CALL):apply({ x })[1]
end

return M

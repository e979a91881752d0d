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

local C, check, box, wrap = T.C, T.check, T.box, T.wrap

local M = {}

local SIGNATURE = { 'roi_indices', 'outsize', 'spatial_scale' }
local CALL = { 'rois', 'roi_indices', 'outh', 'outw', 'spatial_scale' }
local KEPT = { 'rois', 'roi_indices', 'outh', 'outw', 'spatial_scale', 'x_shape' }

local Pool = FunctionNode:extend('ROIAveragePooling2D')
local PoolGrad = FunctionNode:extend('ROIAveragePooling2DGrad')
M.ROIAveragePooling2D, M.ROIAveragePooling2DGrad = Pool, PoolGrad

function Pool:forward(inputs)
  local x, dt = ROIArgs.f32(inputs[1])
  self.x_shape = x.shape
  check(C.ch_roi_average_pooling_2d(x.ptr, self.rois.ptr, self.roi_indices.ptr, self.outh, self.outw,
    self.spatial_scale, box), 3)
  return { ROIArgs.back(wrap(box[0]), dt) }
end
function Pool:backward(idx, gys)
  return { ROIArgs.node(PoolGrad, self, KEPT):apply({ gys[1] })[1] }
end

function PoolGrad:forward(inputs)
  local s = self.x_shape
  local g, dt = ROIArgs.f32(inputs[1])
  check(C.ch_roi_average_pooling_2d_backward(g.ptr, self.rois.ptr, self.roi_indices.ptr, s[1], s[3], s[4],
    self.spatial_scale, box), 3)
  return { ROIArgs.back(wrap(box[0]), dt) }
end
function PoolGrad:backward(idx, gys)
  return { ROIArgs.node(Pool, self, KEPT):apply({ gys[1] })[1] }
end

function M.roi_average_pooling_2d(x, rois, ...)
  local a = ROIArgs.parse('roi_average_pooling_2d', SIGNATURE, x, rois, select('#', ...), ...)
  return ROIArgs.node(Pool, a, CALL):apply({ x })[1]
end

return M

-- functions/pooling/roi_max_pooling_2d.lua: F.roi_max_pooling_2d (Chainer
-- 7's ROI max pooling).
--
--   F.roi_max_pooling_2d(x, rois, roi_indices, outsize, spatial_scale)
--
-- Like F.roi_pooling_2d, except that a ROI (y_min, x_min, y_max, x_max),
-- scaled and rounded half to even, spans max(y_max - y_min, 1) x
-- max(x_max - x_min, 1) cells (no +1) and a bin entirely outside the image
-- gives -inf (Chainer's CPU result).  Only x gets a gradient: the scatter
-- to the argmax cells that roi_pooling_2d uses (ROIMaxScatter), whose own
-- gradient is the matching gather.
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local ROIArgs = require 'chainer.functions.pooling._roi_args'
local ROIPool = require 'chainer.functions.pooling.roi_pooling_2d'

local C, wrap = T.C, T.wrap

local M = {}

local SIGNATURE = { 'roi_indices', 'outsize', 'spatial_scale' }
local CALL = { 'rois', 'roi_indices', 'outh', 'outw', 'spatial_scale' }

local argmax_box = ffi.new('ch_tensor*[1]')

local ROIMaxPooling2D = FunctionNode:extend('ROIMaxPooling2D')
M.ROIMaxPooling2D = ROIMaxPooling2D

ROIArgs.set_gradients(ROIPool.KEPT, { [ROIMaxPooling2D] = ROIPool.ROIMaxScatter })

function ROIMaxPooling2D:forward(inputs)
  local y = ROIArgs.compute(inputs[1], function(x)
    return C.ch_roi_max_pooling_2d(x.ptr, self.rois.ptr, self.roi_indices.ptr, self.outh, self.outw,
      self.spatial_scale, T.box, argmax_box)
  end)
  self.argmax = wrap(argmax_box[0])
  self.x_shape = inputs[1].shape
  return { y }
end

function M.roi_max_pooling_2d(x, rois, ...)
  local a = ROIArgs.parse('roi_max_pooling_2d', SIGNATURE, x, rois, select('#', ...), ...)
  return ROIArgs.node(ROIMaxPooling2D, a, CALL):apply({ x })[1]
end

return M

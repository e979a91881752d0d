-- functions/pooling/roi_pooling_2d.lua: F.roi_pooling_2d (Fast R-CNN's ROI
-- max pooling).
--
--   F.roi_pooling_2d(x, rois, outh, outw, spatial_scale)      (Chainer's)
--   F.roi_pooling_2d(x, rois, {outh =, outw =, spatial_scale =})
--   F.roi_pooling_2d(x, rois, roi_indices, outsize, spatial_scale)
--
-- Chainer's rois are (R, 5) rows (batch_index, x_min, y_min, x_max,
-- y_max); the third form takes the (R, 4) rows (y_min, x_min, y_max,
-- x_max) and roi_indices of the other roi_*_2d functions instead.
-- Each ROI, scaled by spatial_scale and
-- rounded (half to even, as Chainer's CPU code), covers
-- (y_max - y_min + 1) x (x_max - x_min + 1) cells of its image, split into
-- outh x outw bins [floor(i h/outh), ceil((i+1) h/outh)); each output is
-- the max of its bin, 0 for a bin entirely outside the image.  Only x gets
-- a gradient: a scatter to the argmax cells (ROIMaxScatter), whose own
-- gradient is the matching gather, so gradients of any order work.
local ffi = require 'ffi'
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local ROIArgs = require 'chainer.functions.pooling._roi_args'

local C, wrap = T.C, T.wrap

local M = {}

local NO_OPTIONS = args.accept {}

local box2 = ffi.new('ch_tensor*[1]')

local ROIPooling2D = FunctionNode:extend('ROIPooling2D')
local ROIMaxScatter = FunctionNode:extend('ROIMaxScatter')
local ROIMaxGather = FunctionNode:extend('ROIMaxGather')
M.ROIPooling2D, M.ROIMaxScatter, M.ROIMaxGather = ROIPooling2D, ROIMaxScatter, ROIMaxGather

-- what the scatter / gather nodes keep (roi_max_pooling_2d's scatter too)
M.KEPT = { 'rois', 'roi_indices', 'argmax', 'x_shape' }
ROIArgs.set_gradients(M.KEPT, { [ROIPooling2D] = ROIMaxScatter, [ROIMaxScatter] = ROIMaxGather,
  [ROIMaxGather] = ROIMaxScatter })

function ROIPooling2D:forward(inputs)
  local y = ROIArgs.compute(inputs[1], function(x)
    return C.ch_roi_max_pool_2d(x.ptr, self.rois.ptr, self.roi_indices.ptr, self.outh, self.outw,
      self.spatial_scale, T.box, box2)
  end)
  self.argmax = wrap(box2[0])
  self.x_shape = inputs[1].shape
  return { y }
end

function ROIMaxScatter:forward(inputs)
  local s = self.x_shape
  return { ROIArgs.compute(inputs[1], function(g)
    return C.ch_roi_max_pool_2d_scatter(g.ptr, self.roi_indices.ptr, self.argmax.ptr, s[1], s[3], s[4], T.box)
  end) }
end

function ROIMaxGather:forward(inputs)
  return { ROIArgs.compute(inputs[1], function(x)
    return C.ch_roi_max_pool_2d_gather(x.ptr, self.roi_indices.ptr, self.argmax.ptr, T.box)
  end) }
end

function M.roi_pooling_2d(x, rois, a3, a4, a5, a6)
  local xd, rd, idx, outh, outw, scale, opts = ROIArgs.parse_either_form('roi_pooling_2d', x, rois, a3, a4, a5, a6, 2)
  args.options('roi_pooling_2d', opts, NO_OPTIONS)
  local f = setmetatable({}, ROIPooling2D)
  f.rois, f.roi_indices, f.outh, f.outw, f.spatial_scale = rd, idx, outh, outw, scale
  return f:apply({ x })[1]
end

return M

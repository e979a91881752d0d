-- Convolutions and the whole-sequence RNN layers give the same bits
-- whatever the thread count: with adaptive threads (docs/threads.md) the
-- count follows the machine's load, so a result that moved with it would
-- make a seeded run unrepeatable.  Their large products go through
-- runtime/cpu/gemm.h (pieces fixed by the shapes) rather than OpenBLAS's
-- own threading, whose cut points move with the count; one image is the
-- convolution case to watch (too few images to spread over threads by
-- image).  Linear and matmul: linear_threads_spec.lua.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

local function same(a, b) return T.all(T.eq(a, b)):item() end

local threads0
local function fix_threads()
  threads0 = chainer.get_num_threads()
  chainer.set_adaptive_threads(false)   -- the count asked for is the count used
end
local function restore_threads()
  chainer.set_num_threads(threads0)
  chainer.set_adaptive_threads(os.getenv('CHAINLUA_ADAPTIVE_THREADS') ~= '0')
end

-- results[t] = f() run on t threads (t = 1, 2, 3), the seed reset each time;
-- every tensor of the list equal bit for bit to the 1-thread one
local function assert_thread_independent(f, names)
  local results = {}
  for threads = 1, 3 do
    chainer.set_num_threads(threads)
    T.random.seed(32)
    results[threads] = f()
  end
  for threads = 2, 3 do
    for i = 1, #names do
      assert.is_true(same(results[1][i], results[threads][i]),
        string.format('%s differs between 1 and %d threads', names[i], threads))
    end
  end
end

describe('F.convolution_2d and thread counts', function()
  before_each(fix_threads)
  after_each(restore_threads)

  -- { N, Cin, Cout, size, k, stride, pad }: 1x1 on x itself, Winograd 3x3,
  -- im2col (stride 2), a larger batch, and the direct kernels' short reduction
  local cases = {
    { 1, 64, 64, 28, 1, 1, 0 }, { 1, 32, 48, 16, 3, 1, 1 }, { 1, 24, 40, 17, 3, 2, 1 },
    { 5, 16, 24, 12, 3, 1, 1 }, { 1, 3, 64, 32, 7, 2, 3 },
  }
  for _, c in ipairs(cases) do
    local N, Cin, Cout, S, k, s, p = c[1], c[2], c[3], c[4], c[5], c[6], c[7]
    it(string.format('N=%d %d->%d channels %dx%d, %dx%d kernel, stride %d, pad %d: forward and gradients',
        N, Cin, Cout, S, S, k, k, s, p), function()
      T.random.seed(31)
      local x0 = T.random.uniform(-1, 1, { N, Cin, S, S })
      local W0 = T.random.uniform(-1, 1, { Cout, Cin, k, k })
      local b0 = T.random.uniform(-1, 1, { Cout })
      assert_thread_independent(function()
        local x, W, b = chainer.Variable(x0), chainer.Variable(W0), chainer.Variable(b0)
        local y = F.convolution_2d(x, W, b, s, p)
        y.grad = T.random.uniform(-1, 1, y.shape)
        y:backward()
        return { y.array, x.grad, W.grad, b.grad }
      end, { 'y', 'gx', 'gW', 'gb' })
    end)
  end
end)

describe('L.NStepLSTM and thread counts', function()
  before_each(fix_threads)
  after_each(restore_threads)

  it('2 layers, 20 sequences of 35 steps: hy, cy, ys and every gradient', function()
    T.random.seed(33)
    local xs0 = {}
    for i = 1, 20 do xs0[i] = T.random.uniform(-1, 1, { 35, 100 }) end
    assert_thread_independent(function()
      T.random.seed(34)
      local m = chainer.links.NStepLSTM(2, 100, 200, 0)
      local xs = {}
      for i = 1, #xs0 do xs[i] = chainer.Variable(xs0[i]) end
      local hy, cy, ys = m(nil, nil, xs)
      local loss = F.sum(F.concat(ys, 0)) + F.sum(hy) + F.sum(cy)
      loss:backward()
      return { hy.array, cy.array, ys[1].array, m[1].w0.grad, m[1].w4.grad, m[2].b0.grad, xs[1].grad }
    end, { 'hy', 'cy', 'ys[1]', 'w0 grad', 'w4 grad', 'b0 grad', 'xs[1] grad' })
  end)
end)

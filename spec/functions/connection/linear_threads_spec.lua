-- Specs for the MLP hot path of F.linear (issue 8): the one-call C forward
-- (ch_linear) against T.matmul on every layout it accepts, the tensor-level
-- backward taken without a graph against the node path of double backprop,
-- and results that do not depend on the thread count (BLAS always runs
-- single-threaded on fixed row bands, runtime/cpu/blas.c gemm_blocks).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

local function same(a, b) return T.all(T.eq(a, b)):item() end
local testing = require 'chainer.testing'
local function close(a, b, tol) testing.assert_allclose(a, b, { rtol = tol, atol = tol }) return true end

describe('F.linear hot path', function()
  local threads0
  -- a fixed count: on a busy machine adaptive threads would run "2 threads" on one
  local env = os.getenv('CHAINLUA_ADAPTIVE_THREADS')
  local adaptive0 = not (env == '0' or env == 'off' or env == 'false')
  before_each(function()
    threads0 = chainer.get_num_threads()
    chainer.set_adaptive_threads(false)
  end)
  after_each(function()
    chainer.set_num_threads(threads0)
    chainer.set_adaptive_threads(adaptive0)
  end)

  it('matches matmul + b for batch 1 (gemv), strided b, transposed x, float64 and no bias', function()
    T.random.seed(21)
    for _, dt in ipairs({ 'float32', 'float64' }) do
      local tol = dt == 'float32' and 1e-5 or 1e-12
      local W = T.random.uniform(-1, 1, { 7, 5 }, dt)
      local x1 = T.random.uniform(-1, 1, { 1, 5 }, dt)
      local bb = T.random.uniform(-1, 1, { 14 }, dt):slice({ 0, 14, 2 })   -- stride 2
      assert.is_false(bb.is_contiguous)
      local ref = T.matmul(x1, W:transpose()) + bb
      assert.is_true(close(F.linear(x1, W, bb).array, ref, tol))
      local xt = T.random.uniform(-1, 1, { 5, 3 }, dt):transpose()          -- (3, 5), not contiguous
      assert.is_true(close(F.linear(xt, W, bb).array, T.matmul(xt, W:transpose()) + bb, tol))
      assert.is_true(close(F.linear(xt, W).array, T.matmul(xt, W:transpose()), tol))
      local y0 = F.linear(T.zeros({ 0, 5 }, dt), W, bb).array
      assert.same({ 0, 7 }, y0.shape)
    end
  end)

  it('computes batch-1 float32 rows (runtime/cpu/gemv_rows.h) on every shape, stride, alpha and beta', function()
    T.random.seed(25)
    -- row counts around the 8-row tile and the thread split, lengths around 16 lanes
    for _, s in ipairs({ { 1, 1 }, { 7, 15 }, { 9, 16 }, { 203, 1001 }, { 1000, 784 }, { 130, 33 } }) do
      local N, K = s[1], s[2]
      local Wwide = T.random.uniform(-1, 1, { N, K + 3 })
      local W = Wwide:slice({ nil, nil }, { 0, K })      -- rows K + 3 floats apart
      local x = T.random.uniform(-1, 1, { 1, K })
      local b = T.random.uniform(-1, 1, { N })
      local ref = T.matmul(x:astype('float64'), W:astype('float64'):transpose()) + b:astype('float64')
      local tol = 1e-5 * math.sqrt(K)
      assert.is_true(close(F.linear(x, W, b).array:astype('float64'), ref, tol), N .. 'x' .. K)
      local y = T.full({ 1, N }, 0.5)
      T.gemm(y, x, W, { transb = true, alpha = 2, beta = 3 })
      local want = T.matmul(x:astype('float64'), W:astype('float64'):transpose()) * 2 + 1.5
      assert.is_true(close(y:astype('float64'), want, 2 * tol), 'gemm ' .. N .. 'x' .. K)
    end
  end)

  it('computes batch-1 products bit for bit alike on 1, 2 and 3 threads', function()
    T.random.seed(26)
    local W = T.random.uniform(-1, 1, { 1000, 784 })
    local x = T.random.uniform(-1, 1, { 1, 784 })
    local b = T.random.uniform(-1, 1, { 1000 })
    local ys = {}
    for nt = 1, 3 do
      chainer.set_num_threads(nt)
      ys[nt] = F.linear(x, W, b).array
    end
    assert.is_true(same(ys[1], ys[2]), '1 and 2 threads differ')
    assert.is_true(same(ys[1], ys[3]), '1 and 3 threads differ')
  end)

  it('gives the same gradients without a graph as with double backprop', function()
    T.random.seed(22)
    local x = T.random.uniform(-1, 1, { 6, 5 })
    local t = T.array({ 0, 1, 2, 3, 2, 1 }, 'int32')
    local function grads(double)
      local l1 = chainer.links.Linear(5, 8)
      local l2 = chainer.links.Linear(8, 4)
      T.random.seed(5)
      l1.W.array:copy_(T.random.uniform(-1, 1, { 8, 5 }))
      l2.W.array:copy_(T.random.uniform(-1, 1, { 4, 8 }))
      local loss = F.softmax_cross_entropy(l2(F.relu(l1(x))), t)
      loss:backward({ enable_double_backprop = double })
      return { l1.W.grad, l1.b.grad, l2.W.grad, l2.b.grad }
    end
    local a, b = grads(false), grads(true)
    for i = 1, 4 do assert.is_true(same(a[i], b[i]), 'gradient ' .. i) end
  end)

  -- One step of an MLP of the given widths (batch 100) on 1, 2 and 3 threads:
  -- the output, the input gradient and every parameter gradient, bit for bit.
  local function same_on_1_2_3_threads(widths, seed)
    local function run(nt)
      chainer.set_num_threads(nt)
      T.random.seed(seed)
      local layers = {}
      for i = 1, #widths - 1 do layers[i] = chainer.links.Linear(widths[i], widths[i + 1]) end
      local x = chainer.Variable(T.random.uniform(-1, 1, { 100, widths[1] }))
      local t = T.random.randint(0, 10, { 100 }, 'int32')
      local y = x
      for i, l in ipairs(layers) do y = i > 1 and l(F.relu(y)) or l(y) end
      F.softmax_cross_entropy(y, t):backward()
      local r = { y.array, x.grad }
      for _, l in ipairs(layers) do r[#r + 1] = l.W.grad; r[#r + 1] = l.b.grad end
      return r
    end
    local r1, r2, r3 = run(1), run(2), run(3)
    for i = 1, #r1 do
      assert.is_true(same(r1[i], r2[i]), 'output ' .. i .. ' differs between 1 and 2 threads')
      assert.is_true(same(r1[i], r3[i]), 'output ' .. i .. ' differs between 1 and 3 threads')
    end
  end

  it('computes the MLP forward and gradients bit for bit alike on 1, 2 and 3 threads', function()
    same_on_1_2_3_threads({ 300, 200, 10 }, 23)
  end)

  it('cuts a batch against a wide layer into the same column pieces on 1, 2 and 3 threads', function()
    -- the benchmark's MLP, batch 100 against 1000-wide layers: the products of
    -- forward (x W^T) and backward (gy W) are cut by columns (gemm_blocks),
    -- where a cut that moved with the thread count would change the last bits
    same_on_1_2_3_threads({ 784, 1000, 1000, 10 }, 25)
    -- and the pieces make up the product (against float64)
    chainer.set_num_threads(2)
    T.random.seed(26)
    local a, w = T.random.uniform(-1, 1, { 100, 300 }), T.random.uniform(-1, 1, { 1600, 300 })
    local ref = T.matmul(a, w, { transb = true })
    assert.is_true(close(ref, T.matmul(a:astype('float64'), w:astype('float64'), { transb = true }):astype('float32'), 1e-5))
  end)

  it('keeps large matrix products independent of the thread count', function()
    T.random.seed(24)
    local shapes = { { 100, 784, 1000 }, { 1000, 100, 784 }, { 250, 97, 1001 }, { 57, 1000, 999 }, { 191, 400, 191 } }
    for _, dt in ipairs({ 'float32', 'float64' }) do
      for _, s in ipairs(shapes) do
        local M, K, N = s[1], s[2], s[3]
        local a = T.random.uniform(-1, 1, { K, M }, dt)
        local b = T.random.uniform(-1, 1, { N, K }, dt)
        chainer.set_num_threads(1)
        local r1 = T.matmul(a, b, { transa = true, transb = true })
        chainer.set_num_threads(2)
        local r2 = T.matmul(a, b, { transa = true, transb = true })
        assert.is_true(same(r1, r2), string.format('%s %dx%dx%d', dt, M, K, N))
        -- and the memset + beta = 1 path equals a zero-filled beta = 1 gemm
        local c = T.zeros({ M, N }, dt)
        T.gemm(c, a, b, { transa = true, transb = true, beta = 1 })
        assert.is_true(same(c, r2))
      end
    end
  end)
end)

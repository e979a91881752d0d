-- Specs for the float32 products with one short side that skip BLAS's
-- packing (runtime/cpu/gemm_skinny.h): x W^T with few rows of x ("dot"),
-- gy W with few rows of gy ("axpy") and gy^T x with few rows of both
-- ("outer"), the forms of a recurrent model's output layer.  Each is checked
-- against a float64 product on shapes that hit the full tiles and every
-- remainder (odd rows, columns not a multiple of the tile width, reductions
-- not a multiple of 8), with alpha and beta, and bit for bit across thread
-- counts (tolerance: float32 rounding of sums of up to ~4000 terms).  On a CPU
-- with AVX-512 the bulk runs the wider tiles of gemm_skinny512.h and the
-- remainders the AVX2 ones.
local chainer = require 'chainer'
local T = chainer.tensor
local testing = require 'chainer.testing'

local function U(shape) return T.random.uniform(-1, 1, shape, 'float32') end

-- C = alpha * op(a) op(b) + beta * C0 in float32 and, as the reference, float64
local function check(a, b, c0, opts, tol)
  local c = c0:copy()
  T.gemm(c, a, b, opts)
  local ref = c0:astype('float64')
  local o64 = { transa = opts.transa, transb = opts.transb, alpha = opts.alpha, beta = opts.beta }
  T.gemm(ref, a:astype('float64'), b:astype('float64'), o64)
  testing.assert_allclose(c:astype('float64'), ref, { rtol = tol, atol = tol })
  return c
end

local cases = {
  -- name, a shape, b shape, opts (the three skinny forms, then remainders)
  { 'dot 20x200 . (2100x200)^T', { 20, 200 }, { 2100, 200 }, { transb = true } },
  { 'dot odd rows, N % 4, K % 8', { 7, 203 }, { 2053, 203 }, { transb = true } },
  { 'dot with alpha and beta', { 20, 64 }, { 2050, 64 }, { transb = true, alpha = 0.5, beta = 1 } },
  { 'axpy 20x2100 . 2100x200', { 20, 2100 }, { 2100, 200 }, {} },
  { 'axpy odd rows, N % 16, N % 8', { 5, 2049 }, { 2049, 203 }, {} },
  { 'axpy with alpha and beta', { 3, 2051 }, { 2051, 100 }, { alpha = 2, beta = -1 } },
  { 'outer (20x4100)^T . 20x200', { 20, 4100 }, { 20, 200 }, { transa = true } },
  { 'outer M % 4, N % 16, N % 8', { 13, 4099 }, { 13, 205 }, { transa = true, beta = 1 } },
  { 'outer with alpha and beta', { 32, 4097 }, { 32, 40 }, { transa = true, alpha = -1.5, beta = 0.25 } },
  -- the AVX-512 tiles' remainders (32-column tiles, then 16-column ones)
  { 'axpy 32- and 16-column strips', { 9, 2050 }, { 2050, 250 }, { beta = 1 } },
  { 'outer 32- and 16-column tiles', { 20, 4107 }, { 20, 240 }, { transa = true, alpha = 0.75, beta = 0.5 } },
}

describe('skinny float32 gemm (no packing)', function()
  local threads0
  before_each(function() threads0 = chainer.get_num_threads() end)
  after_each(function() chainer.set_num_threads(threads0) end)

  for n, case in ipairs(cases) do
    it('matches float64 and gives the same bits with 1, 2 and 3 threads: ' .. case[1], function()
      T.random.seed(40 + n)
      local a, b = U(case[2]), U(case[3])
      local o = case[4]
      local m = o.transa and case[2][2] or case[2][1]
      local nn = o.transb and case[3][1] or case[3][2]
      local c0 = U({ m, nn })
      chainer.set_num_threads(1)
      local c1 = check(a, b, c0, o, 2e-4)
      for _, t in ipairs({ 2, 3 }) do
        chainer.set_num_threads(t)
        local ct = check(a, b, c0, o, 2e-4)
        assert.is_true(T.all(T.eq(ct, c1)):item())
      end
    end)
  end

  it('ignores NaN in C when beta is 0 (C is written, not read)', function()
    T.random.seed(7)
    for _, o in ipairs({ { transb = true }, {}, { transa = true } }) do
      -- dot: (20, 64) (2100, 64)^T; axpy: (20, 2100) (2100, 40); outer: (20, 4100)^T (20, 40)
      local a = o.transa and U({ 20, 4100 }) or (o.transb and U({ 20, 64 }) or U({ 20, 2100 }))
      local b = o.transb and U({ 2100, 64 }) or (o.transa and U({ 20, 40 }) or U({ 2100, 40 }))
      local c = T.full({ o.transa and 4100 or 20, o.transb and 2100 or 40 }, 0 / 0, 'float32')
      T.gemm(c, a, b, o)
      assert.is_false(T.any(T.isnan(c)):item())
    end
  end)
end)

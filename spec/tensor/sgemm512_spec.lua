-- Specs for the float32 products of runtime/cpu/sgemm512.c (our AVX-512
-- kernel: 8 x 48 register tiles, operands packed per block of 256 terms),
-- which on a CPU with AVX-512 compute every float32 gemm that is not tiny,
-- one-row/one-column or skinny.  Each shape is checked against a float64
-- product: shapes on both sides of every edge (rows around multiples of 8,
-- columns around multiples of 16 and 48, last panels of 1, 2 and 3
-- vectors, reductions around the 256-term blocks and multiples of 8), all
-- four transpositions, alpha and beta,
-- operands that are strided views, and bit for bit across thread counts.
-- On a CPU without AVX-512 the same checks run on OpenBLAS.
local chainer = require 'chainer'
local T = chainer.tensor
local testing = require 'chainer.testing'

local function U(shape) return T.random.uniform(-1, 1, shape, 'float32') end

-- C = alpha * op(a) op(b) + beta * C0 in float32 and, as the reference, float64
local function check(a, b, c0, opts)
  local c = c0:copy()
  T.gemm(c, a, b, opts)
  local ref = c0:astype('float64')
  T.gemm(ref, a:astype('float64'), b:astype('float64'), opts)
  testing.assert_allclose(c:astype('float64'), ref, { rtol = 2e-4, atol = 2e-4 })
  return c
end

local function operands(m, n, k, o)
  local a = o.transa and U({ k, m }) or U({ m, k })
  local b = o.transb and U({ n, k }) or U({ k, n })
  return a, b, U({ m, n })
end

describe('float32 gemm (AVX-512 kernel where the CPU has it)', function()
  local threads0
  before_each(function() threads0 = chainer.get_num_threads() end)
  after_each(function() chainer.set_num_threads(threads0) end)

  it('says in the BLAS line whether float32 products run on it', function()
    local lib = require 'chainer._lib'
    local line = lib.ffi.string(lib.C.ch_blas_info())
    local f = io.open('/proc/cpuinfo')
    local flags = f and f:read('*a'):match('flags%s*:([^\n]*)') or ''
    if f then f:close() end
    local has = flags:find(' avx512f', 1, true) and flags:find(' avx512vl', 1, true)
      and flags:find(' avx512dq', 1, true) and os.getenv('CHAINLUA_SGEMM') ~= 'openblas'
    assert.truthy(line:find('OpenBLAS', 1, true))
    assert.are.equal(has and true or false, line:find('AVX-512 kernel', 1, true) ~= nil)
  end)

  -- {m, n, k}: tile and block edges
  local shapes = {
    { 8, 48, 8 }, { 9, 49, 9 }, { 7, 47, 7 }, { 15, 95, 255 }, { 16, 96, 256 }, { 17, 97, 257 },
    { 23, 33, 513 }, { 40, 17, 31 }, { 10, 64, 40 }, { 11, 80, 40 }, { 3, 300, 40 }, { 300, 20, 70 }, { 65, 577, 100 }, { 200, 150, 784 },
  }
  for _, s in ipairs(shapes) do
    for _, o in ipairs({ {}, { transa = true }, { transb = true }, { transa = true, transb = true } }) do
      local name = string.format('%dx%dx%d%s%s', s[1], s[2], s[3], o.transa and ' A^T' or '', o.transb and ' B^T' or '')
      it('matches float64: ' .. name, function()
        T.random.seed(s[1] * 7 + s[2] + s[3])
        local a, b, c0 = operands(s[1], s[2], s[3], o)
        check(a, b, c0, o)
        check(a, b, c0, { transa = o.transa, transb = o.transb, alpha = -0.5, beta = 2 })
        check(a, b, c0, { transa = o.transa, transb = o.transb, alpha = 3, beta = 0 })
      end)
    end
  end

  it('reads operands that are views with row strides longer than their rows', function()
    T.random.seed(3)
    local big_a, big_b = U({ 70, 300 }), U({ 260, 130 })
    local a = big_a:slice('0:61', '5:265')   -- (61, 260), row stride 300
    local b = big_b:slice('0:260', '3:104')  -- (260, 101), row stride 130
    local c0 = U({ 61, 101 })
    check(a, b, c0, {})
    local bt = big_b:slice('1:102')           -- (101, 130), op(b) = bt^T
    check(U({ 61, 130 }), bt, c0, { transb = true })
    check(U({ 140, 80 }):slice('0:130', '3:64'), bt, c0, { transa = true, transb = true }) -- op(a): (61, 130)
  end)

  it('gives the same bits with 1, 2 and 3 threads (C cut into bands and pieces)', function()
    T.random.seed(11)
    for _, s in ipairs({ { 500, 400, 300 }, { 100, 1000, 784 }, { 1000, 784, 100 } }) do
      local a, b, c0 = operands(s[1], s[2], s[3], {})
      chainer.set_num_threads(1)
      local c1 = check(a, b, c0, {})
      for _, t in ipairs({ 2, 3 }) do
        chainer.set_num_threads(t)
        assert.is_true(T.all(T.eq(check(a, b, c0, {}), c1)):item())
      end
    end
  end)

  -- products big enough for a team of threads (sgemm512.c's units handed out
  -- as threads come free): short ones (under 192 rows: strips of columns,
  -- op(A) packed whole; one with too long an op(A) for that, run as tall),
  -- tall ones (bands of rows across all columns over op(B) packed once for
  -- the team: 300 x 700 x 600, 400 x 1250 x 520; and, for a block
  -- of op(B) too wide for that (200 x 5000 x 600), a single block of K
  -- (520 x 1300 x 40) or of columns (1003 x 130 x 1000), bands within
  -- blocks of columns), ragged last units, several blocks of K, views, alpha
  -- and beta
  it('gives every team product the float64 result and the same bits on 1, 2 and 3 threads', function()
    T.random.seed(12)
    local cases = {
      { 100, 1000, 784, {} }, { 37, 2000, 600, { transb = true } }, { 191, 777, 300, { transa = true } },
      { 100, 200, 12000, {} }, { 300, 700, 600, { transa = true, transb = true } },
      { 1003, 130, 1000, { transb = true } }, { 520, 1300, 40, {} }, { 2000, 49, 300, { transa = true } },
      { 200, 5000, 600, { transb = true } }, { 400, 1250, 520, { transa = true } },
    }
    for _, c in ipairs(cases) do
      local m, n, k, o = c[1], c[2], c[3], c[4]
      local a, b, c0 = operands(m, n, k, o)
      local opts = { transa = o.transa, transb = o.transb, alpha = -0.75, beta = 0.5 }
      local name = string.format('%dx%dx%d', m, n, k)
      chainer.set_num_threads(1)
      local c1, c1b = check(a, b, c0, o), check(a, b, c0, opts)
      for _, t in ipairs({ 2, 3 }) do
        chainer.set_num_threads(t)
        assert.is_true(T.all(T.eq(check(a, b, c0, o), c1)):item(), name .. ' on ' .. t .. ' threads')
        assert.is_true(T.all(T.eq(check(a, b, c0, opts), c1b)):item(), name .. ' (alpha, beta) on ' .. t .. ' threads')
      end
    end
    -- op(A) a view, its rows 1100 floats apart
    local a, b, c0 = U({ 150, 1100 }):slice('0:150', '50:1050'), U({ 1000, 900 }), U({ 150, 900 })
    chainer.set_num_threads(1)
    local c1 = check(a, b, c0, {})
    chainer.set_num_threads(2)
    assert.is_true(T.all(T.eq(check(a, b, c0, {}), c1)):item(), 'view on 2 threads')
  end)

  it('ignores NaN in C when beta is 0 (C is written, not read)', function()
    T.random.seed(5)
    for _, o in ipairs({ {}, { transa = true, transb = true } }) do
      local a, b = operands(130, 200, 300, o)
      local c = T.full({ 130, 200 }, 0 / 0, 'float32')
      T.gemm(c, a, b, o)
      assert.is_false(T.any(T.isnan(c)):item())
    end
  end)

  it('propagates NaN and infinity from the operands', function()
    local a, b = T.ones({ 20, 300 }, 'float32'), T.ones({ 300, 60 }, 'float32')
    a:set(3, 7, 0 / 0)
    b:set(10, 50, 1 / 0)
    local c = T.matmul(a, b)
    assert.is_true(c:get(3, 0) ~= c:get(3, 0))     -- NaN along a's row 3
    assert.is_true(c:get(0, 50) == 1 / 0)          -- +inf along b's column 50
    assert.is_true(c:get(3, 50) ~= c:get(3, 50))
    assert.are.equal(300, c:get(0, 0))
  end)
end)

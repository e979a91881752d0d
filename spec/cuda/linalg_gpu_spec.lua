-- Linear algebra (cuSOLVER) and the FFT (cuFFT) on a real GPU (issue 15):
-- F.inv / batch_inv, F.det / batch_det, F.cholesky, T.solve, F.fft / ifft,
-- forward and backward, each compared with the CPU (OpenBLAS's LAPACK and
-- chainlua's own FFT) on the same inputs, and the CPU's errors for singular
-- and indefinite matrices.  Tagged `gpu`: without a GPU it reports one
-- pending line.  Failures name the op, shape, dtype and largest difference.
--
-- NOTE: written without a GPU; these specs have not yet run on one.
local chainer = require 'chainer'
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local cuda = require 'chainer.cuda'
local Variable = chainer.Variable

local DEV = 'cuda:0'
local R = T.random
-- another factorization order than LAPACK's: agreement to a few ulps of
-- the condition number, not bits
local TOL = { float32 = 2e-4, float64 = 1e-10 }

local E = require 'cuda.max_error'
local function close(g, c, what, scale) return E.close(DEV, TOL, g, c, what, scale) end

local function arr(v) return v.array or v end

-- Well-conditioned square matrices: random plus n on the diagonal.
local function square(shape, dt)
  local n = shape[#shape]
  return R.uniform(-1, 1, shape, dt) + T.eye(n, n, 0, dt) * n
end

-- Forward and the gradient of sum(f(x) * w) on both devices.
local function both(f, x0, what, scale)
  local function run(device)
    local x = Variable(x0:to_device(device))
    local y = f(x)
    local w = T.ones(arr(y).shape, arr(y).dtype, device) * 0.5
    local g = chainer.grad({ F.sum(y * w) }, { x })
    return arr(y), arr(g[1])
  end
  local gy, gg = run(DEV)
  local cy, cg = run('@numpy')
  close(gy, cy, what, scale)
  close(gg, cg, what .. ' gradient', scale)
end

describe('linear algebra and FFT on a GPU #gpu', function()
  if require('cuda.helpers').without_gpu('linalg/FFT') then return end

  before_each(function() R.seed(9) end)

  for _, dt in ipairs({ 'float32', 'float64' }) do
    it('F.inv and F.batch_inv ' .. dt .. ' agree with the CPU', function()
      for _, n in ipairs({ 1, 3, 17 }) do
        both(F.inv, square({ n, n }, dt), 'F.inv n=' .. n)
        both(F.batch_inv, square({ 4, n, n }, dt), 'F.batch_inv 4 x n=' .. n)
      end
    end)

    it('F.det and F.batch_det ' .. dt .. ' agree with the CPU', function()
      for _, n in ipairs({ 1, 2, 5, 12 }) do
        both(F.det, square({ n, n }, dt), 'F.det n=' .. n, 10)
        both(F.batch_det, square({ 3, n, n }, dt), 'F.batch_det 3 x n=' .. n, 10)
      end
      -- a singular matrix has determinant 0 on both
      local s = T.array({ { 1, 2 }, { 2, 4 } }, dt)
      close(T.det(s:to_device(DEV)), T.det(s), 'det of a singular matrix')
    end)

    it('F.cholesky ' .. dt .. ' agrees with the CPU', function()
      for _, n in ipairs({ 1, 4, 16 }) do
        local a = R.uniform(-1, 1, { n, n }, dt)
        local spd = a:matmul(a:transpose()) + T.eye(n, n, 0, dt) * n
        both(F.cholesky, spd, 'F.cholesky n=' .. n, 10)
      end
    end)

    it('T.solve ' .. dt .. ' agrees with the CPU (vector and matrix right-hand sides, batched)', function()
      local a, b = square({ 3, 5, 5 }, dt), R.uniform(-1, 1, { 3, 5, 2 }, dt)
      close(T.solve(a:to_device(DEV), b:to_device(DEV)), T.solve(a, b), 'solve (3, 5, 5) (3, 5, 2)')
      local a2, b2 = square({ 6, 6 }, dt), R.uniform(-1, 1, { 6 }, dt)
      close(T.solve(a2:to_device(DEV), b2:to_device(DEV)), T.solve(a2, b2), 'solve (6, 6) (6,)')
    end)

    it('F.fft and F.ifft ' .. dt .. ' agree with the CPU for power-of-two and other lengths', function()
      for _, n in ipairs({ 8, 12, 97 }) do
        local re, im = R.uniform(-1, 1, { 3, n }, dt), R.uniform(-1, 1, { 3, n }, dt)
        for _, name in ipairs({ 'fft', 'ifft' }) do
          local function run(device)
            local r, i = Variable(re:to_device(device)), Variable(im:to_device(device))
            local yr, yi = F[name]({ r, i })
            local g = chainer.grad({ F.sum(yr * yr) + F.sum(yi) }, { r, i })
            return { arr(yr), arr(yi), arr(g[1]), arr(g[2]) }
          end
          local g, c = run(DEV), run('@numpy')
          local labels = { 'real', 'imag', 'real gradient', 'imag gradient' }
          for k = 1, 4 do close(g[k], c[k], string.format('F.%s n=%d %s', name, n, labels[k]), 10) end
        end
      end
    end)
  end

  it('names the singular or indefinite matrix as the CPU does', function()
    local sing = T.array({ { { 1, 0 }, { 0, 1 } }, { { 1, 2 }, { 2, 4 } } }, 'float64')
    local ok_c, err_c = pcall(T.inv, sing)
    local ok_g, err_g = pcall(T.inv, sing:to_device(DEV))
    assert.is_false(ok_c)
    assert.is_false(ok_g)
    assert.are.equal(err_c, err_g)
    local b = T.ones({ 2, 2, 1 }, 'float64')
    ok_c, err_c = pcall(T.solve, sing, b)
    ok_g, err_g = pcall(T.solve, sing:to_device(DEV), b:to_device(DEV))
    assert.is_false(ok_g)
    assert.are.equal(err_c, err_g)
    local indef = T.array({ { 1, 2 }, { 2, 1 } }, 'float64')
    ok_c, err_c = pcall(T.cholesky, indef)
    ok_g, err_g = pcall(T.cholesky, indef:to_device(DEV))
    assert.is_false(ok_g)
    assert.are.equal(err_c, err_g)
  end)
end)

-- Float32 3x3 stride-1 convolutions with 32+ input and output channels take
-- Winograd (runtime/cpu/conv_winograd.h) for all three passes (the
-- data-gradient kernel is also F.deconvolution_2d's forward): F(4x4, 3x3)
-- where the map a pass writes is 8 x 8 or larger (conv_winograd_f43.h),
-- F(2x2, 3x3) below that.  These compare them with the float64 computation
-- (im2col + gemm) on shapes that hit the edge cases: odd sizes (ragged last
-- tiles), pad 0 and 2, 1x1 images, a bias, rows of more than 16 tiles (the
-- AVX-512 transforms' width), tiles that straddle the product's 48-column
-- panels, a batch larger than one chunk of the transform buffers.
--
-- The bound is relative to the largest |reference| element.  F(2x2, 3x3)
-- stays within 1e-5 (measured ~3e-7).  F(4x4, 3x3)'s interpolation points
-- (0, +-1, +-2) cost accuracy: ~4e-6 to 2e-5 on these uniform(-1, 1) inputs
-- with 32 to 256 channels, so its bound is 5e-5.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

local function run(fn, x, W, b)
  local xv, Wv = chainer.Variable(x), chainer.Variable(W)
  local bv = b and chainer.Variable(b) or nil
  local y = fn(xv, Wv, bv)
  T.random.seed(7)
  local gy = T.random.uniform(-1, 1, y.shape, x.dtype)
  y.grad = gy
  y:backward()
  return y.array, xv.grad, Wv.grad
end

-- max |a - ref| relative to max |ref|
local function rel_err(a, ref)
  local scale = T.max(T.abs(ref)):item()
  return T.max(T.abs(a:astype('float64') - ref)):item() / math.max(scale, 1e-30)
end

local function compare(fn, xs, ws, with_bias, tol)
  tol = tol or 1e-5
  T.random.seed(1)
  local x = T.random.uniform(-1, 1, xs, 'float32')
  local W = T.random.uniform(-1, 1, ws, 'float32')
  local b = with_bias and T.random.uniform(-1, 1, { ws[2] == xs[2] and ws[1] or ws[2] }, 'float32') or nil
  local y, gx, gW = run(fn, x, W, b)
  local y2, gx2, gW2 = run(fn, x:astype('float64'), W:astype('float64'), b and b:astype('float64'))
  assert.is_true(rel_err(y, y2) < tol, 'y off by ' .. rel_err(y, y2))
  assert.is_true(rel_err(gx, gx2) < tol, 'gx off by ' .. rel_err(gx, gx2))
  assert.is_true(rel_err(gW, gW2) < tol, 'gW off by ' .. rel_err(gW, gW2))
end

describe('convolution Winograd path (float32, 3x3, stride 1, 32+ channels)', function()
  local F22, F44 = 1e-5, 5e-5
  local cases = {
    -- F(2x2, 3x3): every map below 8 x 8
    { 'pad 1, odd sizes', { 2, 32, 7, 5 }, { 40, 32, 3, 3 }, { pad = 1 }, F22 },
    { 'pad 0', { 1, 33, 6, 5 }, { 35, 33, 3, 3 }, { pad = 0 }, F22 },
    { 'pad 2', { 2, 32, 4, 5 }, { 32, 32, 3, 3 }, { pad = 2 }, F22 },
    { '1x1 images', { 3, 40, 1, 1 }, { 36, 40, 3, 3 }, { pad = 1 }, F22 },
    -- F(4x4, 3x3)
    { 'F(4x4): pad 1, odd sizes', { 2, 32, 13, 11 }, { 40, 32, 3, 3 }, { pad = 1 }, F44 },
    { 'F(4x4): pad 0 (the data gradient pads 2)', { 1, 33, 11, 10 }, { 35, 33, 3, 3 }, { pad = 0 }, F44 },
    { 'F(4x4): pad 2 (the data gradient pads 0)', { 2, 32, 9, 8 }, { 32, 32, 3, 3 }, { pad = 2 }, F44 },
    { 'F(4x4): rows of 18 tiles', { 1, 32, 9, 70 }, { 33, 32, 3, 3 }, { pad = 1 }, F44 },
    { 'F(4x4): tiles across panels', { 3, 32, 20, 30 }, { 32, 32, 3, 3 }, { pad = 1 }, F44 },
    { 'F(4x4) forward, F(2x2) data gradient', { 2, 32, 6, 6 }, { 32, 32, 3, 3 }, { pad = 2 }, F44 },
    { 'a batch of several transform chunks', { 20, 64, 32, 32 }, { 32, 64, 3, 3 }, { pad = 1 }, F44 },
  }
  for _, c in ipairs(cases) do
    it('matches float64 im2col + gemm: ' .. c[1], function()
      compare(function(x, W, b) return F.convolution_2d(x, W, b, c[4]) end, c[2], c[3], true, c[5])
    end)
  end

  it('deconvolution_2d (the data-gradient kernel as its forward)', function()
    compare(function(x, W, b) return F.deconvolution_2d(x, W, b, { pad = 1 }) end, { 2, 32, 5, 6 }, { 32, 48, 3, 3 },
      true)
    compare(function(x, W, b) return F.deconvolution_2d(x, W, b, { pad = 1 }) end, { 2, 32, 9, 12 },
      { 32, 48, 3, 3 }, true, F44)
  end)

  it('gives the same float32 result with 1 and 2 threads', function()
    T.random.seed(3)
    -- 10 x 10: F(4x4, 3x3) in all three passes
    local x = T.random.uniform(-1, 1, { 8, 32, 10, 10 }, 'float32')
    local W = T.random.uniform(-1, 1, { 48, 32, 3, 3 }, 'float32')
    local n0 = T.C.ch_get_num_threads and T.C.ch_get_num_threads() or 2
    local f = function(xv, Wv) return F.convolution_2d(xv, Wv, nil, 1, 1) end
    T.C.ch_set_num_threads(1)
    local y1, gx1, gW1 = run(f, x, W)
    T.C.ch_set_num_threads(2)
    local y2, gx2, gW2 = run(f, x, W)
    T.C.ch_set_num_threads(n0)
    assert.are.equal(0, (y1 - y2):abs():max():item())
    assert.are.equal(0, (gx1 - gx2):abs():max():item())
    assert.are.equal(0, (gW1 - gW2):abs():max():item())
  end)
end)

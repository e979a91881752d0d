-- Stride-1 float32 convolutions take the direct AVX2 kernels of
-- runtime/cpu/conv_direct.h (when the CPU has them); these shapes hit their
-- edge cases: output rows not a multiple of 8, padding (also larger than
-- k-1, where the data gradient falls back to im2col), dilation, 1-d,
-- channel counts that do not fill a 3-channel tile, a single output pixel,
-- and LeNet's conv2 geometry.  Checked against the naive reference (float64 runs
-- the im2col path, so both paths are compared with the same numbers).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = dofile('spec/functions/connection/conv_reference.lua')

local tol = R.tol

local rnd = require('helpers').uniform

local cases = {
  { 'LeNet conv2 geometry (12x12 -> 8x8, 5x5)', { 1, 4, 12, 12 }, { 5, 4, 5, 5 }, {} },
  { 'ragged rows, pad 1', { 2, 3, 7, 9 }, { 4, 3, 3, 3 }, { pad = 1 } },
  { 'rectangular kernel, pad and dilate', { 2, 5, 6, 5 }, { 7, 5, 3, 2 }, { pad = { 2, 1 }, dilate = { 2, 1 } } },
  { 'pad larger than k-1', { 2, 3, 8, 8 }, { 5, 3, 3, 3 }, { pad = 4 } },
  { 'one output channel, one output pixel', { 3, 2, 3, 3 }, { 1, 2, 3, 3 }, {} },
  { 'wide rows (3 units per row)', { 1, 2, 5, 28 }, { 2, 2, 5, 5 }, { pad = 2 } },
}

for _, c in ipairs(cases) do
  local name, xs, ws, opts = c[1], c[2], c[3], c[4]
  function_spec.describe('F.convolution_2d direct path: ' .. name, {
    fn = function(x, W, b) return F.convolution_2d(x, W, b, opts) end,
    inputs = function(dt) return { rnd(xs)(dt), rnd(ws)(dt), rnd({ ws[1] })(dt) } end,
    reference = function(x, W, b) return R.conv(x, W, b, opts) end,
    backward_tol = tol,
  })
end

function_spec.describe('F.convolution_1d direct path (pad, dilate)', {
  fn = function(x, W, b) return F.convolution_1d(x, W, b, { pad = 2, dilate = 2 }) end,
  inputs = function(dt) return { rnd({ 2, 4, 19 })(dt), rnd({ 5, 4, 3 })(dt), rnd({ 5 })(dt) } end,
  reference = function(x, W, b) return R.conv(x, W, b, { pad = 2, dilate = 2 }) end,
  backward_tol = tol,
})

describe('convolution direct path', function()
  it('gives the same float32 result with 1 and 2 threads', function()
    T.random.seed(3)
    local x = T.random.uniform(-1, 1, { 16, 20, 12, 12 }, 'float32')
    local W = T.random.uniform(-1, 1, { 50, 20, 5, 5 }, 'float32')
    local gy = T.random.uniform(-1, 1, { 16, 50, 8, 8 }, 'float32')
    local function run()
      local xv, Wv = chainer.Variable(x), chainer.Variable(W)
      local y = F.convolution_2d(xv, Wv)
      y.grad = gy
      y:backward()
      return y.array, xv.grad, Wv.grad
    end
    local n0 = T.C.ch_get_num_threads and T.C.ch_get_num_threads() or 2
    T.C.ch_set_num_threads(1)
    local y1, gx1, gW1 = run()
    T.C.ch_set_num_threads(2)
    local y2, gx2, gW2 = run()
    T.C.ch_set_num_threads(n0)
    assert.are.equal(0, (y1 - y2):abs():max():item())
    assert.are.equal(0, (gx1 - gx2):abs():max():item())
    assert.are.equal(0, (gW1 - gW2):abs():max():item())
  end)
end)

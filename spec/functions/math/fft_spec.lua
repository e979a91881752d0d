-- F.fft / F.ifft: against the DFT as a matrix product, for a power-of-two
-- length, a short odd one (direct sum) and a long one (Bluestein);
-- gradients of any order; inverse pairs; errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'
local U = T.random.uniform

-- y = W x over the last axis with W_jk = exp(sign 2 pi i jk / n), in float64
local function dft(re, im, sign, scale)
  local dt, n = re.dtype, re.shape[#re.shape]
  local j = T.arange(n, 'float64'):reshape({ n, 1 })
  local angle = T.mod(j * T.arange(n, 'float64'), n) * (sign * 2 * math.pi / n)
  local c, s = T.cos(angle), T.sin(angle)
  re, im = re:astype('float64'), im:astype('float64')
  local yr = T.matmul(re, c) - T.matmul(im, s)
  local yi = T.matmul(re, s) + T.matmul(im, c)
  return { (yr * scale):astype(dt), (yi * scale):astype(dt) }
end

local cases = {
  { name = 'n = 8', opts = { shape = { 3, 8 } } },
  { name = 'n = 5', opts = { shape = { 2, 5 } } },
  { name = 'n = 70 (Bluestein), 3-d', opts = { shape = { 2, 1, 70 } } },
}
local function inputs(dt, o) return { U(-1, 1, o.shape, dt), U(-1, 1, o.shape, dt) } end
local tol = { float32 = { atol = 1e-5, rtol = 1e-4 }, float64 = { atol = 1e-12, rtol = 1e-10 } }

function_spec.describe('F.fft', {
  fn = function(r, i) return { F.fft({ r, i }) } end,
  inputs = inputs, cases = cases, forward_tol = tol, double_backward = true,
  reference = function(r, i) return dft(r, i, -1, 1) end,
})

function_spec.describe('F.ifft', {
  fn = function(r, i) return { F.ifft({ r, i }) } end,
  inputs = inputs, cases = cases, forward_tol = tol, double_backward = true,
  reference = function(r, i) return dft(r, i, 1, 1 / r.shape[#r.shape]) end,
})

describe('F.fft', function()
  it('is undone by F.ifft for lengths that take each path', function()
    for _, n in ipairs({ 1, 2, 3, 16, 63, 64, 65, 127, 200 }) do
      local r, i = U(-1, 1, { 2, n }, 'float64'), U(-1, 1, { 2, n }, 'float64')
      local br, bi = F.ifft({ F.fft({ r, i }) })
      testing.assert_allclose(br.array, r, { atol = 1e-13, rtol = 0 })
      testing.assert_allclose(bi.array, i, { atol = 1e-13, rtol = 0 })
    end
  end)
  it('gives the sum as its first coefficient and keeps float32', function()
    local r, i = F.fft(T.array({ 1, 2, 3, 4, 5 }, 'float32'), T.zeros({ 5 }, 'float32'))
    assert.are.equal('float32', r.dtype)
    assert.is_true(math.abs(r.array:totable()[1] - 15) < 1e-6)
    assert.is_true(math.abs(i.array:totable()[1]) < 1e-6)
  end)
  it('rejects bad inputs', function()
    local x = T.ones({ 2, 3 }, 'float64')
    assert.error_matches(function() F.fft(x) end, 'fft: x must be a pair {real, imag} of Variables or tensors %(got a tensor%)')
    assert.error_matches(function() F.ifft({ x }) end, 'ifft: x must be a pair')
    assert.error_matches(function() F.fft({ x, T.ones({ 2, 4 }, 'float64') }) end,
      'fft: real and imag must have one shape %(got %(2, 3%) and %(2, 4%)%)')
    assert.error_matches(function() F.fft({ x, T.ones({ 2, 3 }, 'float32') }) end,
      'fft: real and imag must have one dtype %(got float64 and float32%)')
    assert.error_matches(function() F.fft({ T.ones({ 2 }, 'int32'), T.ones({ 2 }, 'int32') }) end,
      'fft: real must be a float tensor')
    assert.error_matches(function() F.fft({ T.array(1.0), T.array(1.0) }) end, 'fft: real and imag must have at least one axis')
  end)
end)

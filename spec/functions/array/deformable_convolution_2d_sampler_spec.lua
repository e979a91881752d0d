-- F.deformable_convolution_2d_sampler
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'

-- Direct loops: output (o, p, q) = b[o] + sum_{c,i,j} W[o,c,i,j] *
-- bilinear(x zero-padded, p sy + i + dy, q sx + j + dx), zero outside.
local function reference(x, offset, W, b, sy, sx, ph, pw)
  local X, O, Wt = x:totable(), offset:totable(), W:totable()
  local B = b and b:totable()
  local n, c, h, w = x.shape[1], x.shape[2], x.shape[3], x.shape[4]
  local out_c, kh, kw = W.shape[1], W.shape[3], W.shape[4]
  local oh, ow = offset.shape[3], offset.shape[4]
  local function px(nn, cc, yy, xx)    -- padded image, zero outside
    local iy, ix = yy - ph, xx - pw
    if iy < 0 or iy >= h or ix < 0 or ix >= w then return 0 end
    return X[nn][cc][iy + 1][ix + 1]
  end
  local function sample(nn, cc, yy, xx)
    local y0, x0 = math.floor(yy), math.floor(xx)
    local fy, fx = yy - y0, xx - x0
    return (1 - fy) * (1 - fx) * px(nn, cc, y0, x0) + (1 - fy) * fx * px(nn, cc, y0, x0 + 1)
      + fy * (1 - fx) * px(nn, cc, y0 + 1, x0) + fy * fx * px(nn, cc, y0 + 1, x0 + 1)
  end
  local out = {}
  for nn = 1, n do
    out[nn] = {}
    for o = 1, out_c do
      out[nn][o] = {}
      for p = 0, oh - 1 do
        out[nn][o][p + 1] = {}
        for q = 0, ow - 1 do
          local acc = B and B[o] or 0
          for i = 0, kh - 1 do
            for j = 0, kw - 1 do
              local k = i * kw + j
              local dx, dy = O[nn][k + 1][p + 1][q + 1], O[nn][kh * kw + k + 1][p + 1][q + 1]
              for cc = 1, c do
                acc = acc + Wt[o][cc][i + 1][j + 1] * sample(nn, cc, p * sy + i + dy, q * sx + j + dx)
              end
            end
          end
          out[nn][o][p + 1][q + 1] = acc
        end
      end
    end
  end
  return T.array(out, x.dtype)
end

local function outsize(size, k, s, p) return math.floor((size + 2 * p - k) / s) + 1 end

function_spec.describe('F.deformable_convolution_2d_sampler', {
  fn = function(x, offset, W, b, o)
    return F.deformable_convolution_2d_sampler(x, offset, W, b, { stride = o.stride, pad = o.pad })
  end,
  inputs = function(dt, o)
    local s, p = o.stride, o.pad
    local oh, ow = outsize(5, 2, s[1], p[1]), outsize(p[2] > 0 and 2 or 4, 3, s[2], p[2])
    -- offsets within +-0.9 keep every sample less than one cell outside the
    -- image, where the sampler's gradient is the true derivative (farther
    -- out Chainer clips the coordinates but keeps their gradient)
    return { T.random.uniform(-1, 1, { 1, 2, 5, o.pad[2] > 0 and 2 or 4 }, dt), T.random.uniform(-0.9, 0.9, { 1, 2 * 2 * 3, oh, ow }, dt),
      T.random.uniform(-1, 1, { 2, 2, 2, 3 }, dt), T.random.uniform(-1, 1, { 2 }, dt) }
  end,
  reference = function(x, offset, W, b, o)
    return reference(x, offset, W, b, o.stride[1], o.stride[2], o.pad[1], o.pad[2])
  end,
  backward_tol = { float32 = { atol = 5e-3, rtol = 5e-2 }, float64 = { atol = 1e-5, rtol = 1e-4 } },
  eps = 1e-4,
  cases = {
    { name = 'stride 1 pad 0', opts = { stride = { 1, 1 }, pad = { 0, 0 } } },
    { name = 'stride (2, 1) pad (1, 0)', opts = { stride = { 2, 1 }, pad = { 1, 0 } } },
    { name = 'stride 1 pad (0, 2)', opts = { stride = { 1, 1 }, pad = { 0, 2 } } },
  },
})

describe('F.deformable_convolution_2d_sampler', function()
  it('with zero offsets equals F.convolution_2d', function()
    local x = T.random.uniform(-1, 1, { 2, 3, 6, 5 }, 'float64')
    local W = T.random.uniform(-1, 1, { 4, 3, 3, 2 }, 'float64')
    local b = T.random.uniform(-1, 1, { 4 }, 'float64')
    local oh, ow = outsize(6, 3, 2, 1), outsize(5, 2, 1, 1)
    local off = T.zeros({ 2, 2 * 3 * 2, oh, ow }, 'float64')
    local y = F.deformable_convolution_2d_sampler(x, off, W, b, { stride = { 2, 1 }, pad = 1 })
    local yc = F.convolution_2d(x, W, b, { stride = { 2, 1 }, pad = 1 })
    chainer.testing.assert_allclose(y.array, yc.array, { atol = 1e-12, rtol = 1e-12 })
  end)
  it('b may be omitted, also in front of the options', function()
    local x = T.random.uniform(-1, 1, { 1, 1, 4, 4 }, 'float32')
    local W = T.random.uniform(-1, 1, { 2, 1, 2, 2 }, 'float32')
    local off = T.random.uniform(-0.5, 0.5, { 1, 8, 3, 3 }, 'float32')
    local y1 = F.deformable_convolution_2d_sampler(x, off, W)
    local y2 = F.deformable_convolution_2d_sampler(x, off, W, { stride = 1 })
    chainer.testing.assert_allclose(y1.array, y2.array, { atol = 0, rtol = 0 })
    chainer.testing.assert_allclose(y1.array, reference(x, off, W, nil, 1, 1, 0, 0), { atol = 1e-5, rtol = 1e-5 })
  end)
  it('rejects bad inputs with errors naming the function and argument', function()
    local x = T.zeros({ 1, 2, 4, 4 }, 'float32')
    local W = T.zeros({ 3, 2, 2, 2 }, 'float32')
    local off = T.zeros({ 1, 8, 3, 3 }, 'float32')
    assert.error_matches(function() F.deformable_convolution_2d_sampler(x, T.zeros({ 1, 6, 3, 3 }, 'float32'), W) end,
      'deformable_convolution_2d_sampler: offset must be %(n, 2 %* kh %* kw, out_h, out_w%)')
    assert.error_matches(function() F.deformable_convolution_2d_sampler(x, off, T.zeros({ 3, 5, 2, 2 }, 'float32')) end,
      'deformable_convolution_2d_sampler: W has 5 input channels but x has 2')
    assert.error_matches(function() F.deformable_convolution_2d_sampler(T.zeros({ 2, 4, 4 }, 'float32'), off, W) end,
      'deformable_convolution_2d_sampler: x must be 4%-d')
    assert.error_matches(function() F.deformable_convolution_2d_sampler(x, off:astype('float64'), W) end,
      'deformable_convolution_2d_sampler: x, offset and W must have the same dtype')
    assert.error_matches(function() F.deformable_convolution_2d_sampler(x, off, W, T.zeros({ 2 }, 'float32')) end,
      'deformable_convolution_2d_sampler: b must be %(3%)')
    assert.error_matches(function() F.deformable_convolution_2d_sampler(x:astype('int32'), off, W) end,
      'deformable_convolution_2d_sampler: x must be float32 or float64')
  end)
end)

-- F.im2col, F.resize_images, F.spatial_transformer_grid/sampler
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

-- direct definition: col[n, (c*kh + i)*kw + j, y, x] = x[n, c, y*s - p + i*d, x*s - p + j*d]
local function im2col_ref(x, k, s, p, d, cover_all)
  local N, C, H, W = unpack(x.shape)
  local dk = k + (k - 1) * (d - 1)
  local oh = cover_all and math.floor((H + 2 * p - dk + s - 1) / s) + 1 or math.floor((H + 2 * p - dk) / s) + 1
  local ow = cover_all and math.floor((W + 2 * p - dk + s - 1) / s) + 1 or math.floor((W + 2 * p - dk) / s) + 1
  local xt = x:totable()
  local out = {}
  for n = 1, N do
    out[n] = {}
    for c = 0, C - 1 do for i = 0, k - 1 do for j = 0, k - 1 do
      local rows = {}
      for y = 0, oh - 1 do
        rows[y + 1] = {}
        for xx = 0, ow - 1 do
          local iy, ix = y * s - p + i * d, xx * s - p + j * d
          local v = 0
          if iy >= 0 and iy < H and ix >= 0 and ix < W then v = xt[n][c + 1][iy + 1][ix + 1] end
          rows[y + 1][xx + 1] = v
        end
      end
      out[n][(c * k + i) * k + j + 1] = rows
    end end end
  end
  return T.array(out, x.dtype)
end

function_spec.describe('F.im2col', {
  fn = function(x, o) return F.im2col(x, o.k, { stride = o.s, pad = o.p, dilate = o.d, cover_all = o.cover_all }) end,
  inputs = function(dt) return { U(-1, 1, { 2, 2, 5, 6 }, dt) } end,
  reference = function(x, o) return im2col_ref(x, o.k, o.s, o.p, o.d, o.cover_all) end,
  double_backward = true,
  dtypes = { 'float16', 'float32', 'float64' },   -- float16 runs the kernel in float32
  cases = { { name = 'k3s2p1', opts = { k = 3, s = 2, p = 1, d = 1 } },
    { name = 'k2_dilate2', opts = { k = 2, s = 1, p = 0, d = 2 } },
    { name = 'cover_all', opts = { k = 2, s = 2, p = 0, d = 1, cover_all = true } } },
})

function_spec.describe('F.resize_images', {
  fn = function(x, o) return F.resize_images(x, o.shape, { align_corners = o.ac, mode = o.mode }) end,
  inputs = function(dt) return { U(-1, 1, { 1, 2, 3, 4 }, dt) } end,
  reference = function(x, o)
    -- direct per-pixel bilinear/nearest interpolation
    local _, C, H, W = unpack(x.shape)
    local oh, ow = o.shape[1], o.shape[2]
    local xt = x:totable()
    local function coord(i, n, out)
      if o.mode == 'nearest' then return math.min(math.floor(i * n / out), n - 1), 0 end
      local u = o.ac ~= false and (out > 1 and i * (n - 1) / (out - 1) or 0) or math.max((i + 0.5) * n / out - 0.5, 0)
      local u0 = math.floor(u)
      return u0, u - u0
    end
    local r = { {} }
    for c = 1, C do
      r[1][c] = {}
      for i = 0, oh - 1 do
        r[1][c][i + 1] = {}
        local y0, fy = coord(i, H, oh)
        local y1 = math.min(y0 + 1, H - 1)
        for j = 0, ow - 1 do
          local x0, fx = coord(j, W, ow)
          local x1 = math.min(x0 + 1, W - 1)
          local p = xt[1][c]
          r[1][c][i + 1][j + 1] = (1 - fy) * ((1 - fx) * p[y0 + 1][x0 + 1] + fx * p[y0 + 1][x1 + 1])
            + fy * ((1 - fx) * p[y1 + 1][x0 + 1] + fx * p[y1 + 1][x1 + 1])
        end
      end
    end
    return T.array(r, x.dtype)
  end,
  double_backward = true,
  cases = { { name = 'up_align', opts = { shape = { 5, 7 } } }, { name = 'down_noalign', opts = { shape = { 2, 3 }, ac = false } },
    { name = 'nearest', opts = { shape = { 5, 3 }, mode = 'nearest' } } },
})

function_spec.describe('F.spatial_transformer_sampler', {
  fn = function(x, g) return F.spatial_transformer_sampler(x, g) end,
  inputs = function(dt) return { U(-1, 1, { 2, 3, 4, 5 }, dt), U(-0.9, 0.9, { 2, 2, 3, 2 }, dt) } end,
  backward_tol = { float32 = { atol = 5e-3, rtol = 5e-2 } },
})
function_spec.describe('F.spatial_transformer_grid', {
  fn = function(t) return F.spatial_transformer_grid(t, { 3, 4 }) end,
  inputs = function(dt) return { U(-1, 1, { 2, 2, 3 }, dt) } end,
  double_backward = true,
})

describe('resampling', function()
  it('resize_images matches hand values (align_corners)', function()
    local x = T.array({ { { { 0, 1 }, { 2, 3 } } } }, 'float64')
    assert.are.same({ { { { 0, 0.5, 1 }, { 1, 1.5, 2 }, { 2, 2.5, 3 } } } }, F.resize_images(x, { 3, 3 }).array:totable())
    assert.error_matches(function() F.resize_images(T.zeros({ 2, 2 }), { 3, 3 }) end, 'resize_images: x must be 4%-d')
  end)
  it('an identity transform samples the image itself', function()
    local theta = T.array({ { { 1, 0, 0 }, { 0, 1, 0 } } }, 'float64')
    local g = F.spatial_transformer_grid(theta, { 3, 4 })
    chainer.testing.assert_allclose(g.array:slice(0, 0, 0), T.array({ -1, -1 / 3, 1 / 3, 1 }, 'float64'), { atol = 1e-15, rtol = 0 })
    local x = U(-1, 1, { 1, 2, 3, 4 }, 'float64')
    chainer.testing.assert_allclose(F.spatial_transformer_sampler(x, g).array, x, { atol = 1e-12, rtol = 0 })
  end)
  it('samples zeros outside the image', function()
    local x = T.ones({ 1, 1, 2, 2 }, 'float64')
    local g = T.full({ 1, 2, 1, 1 }, 5, 'float64')
    assert.are.same({ { { { 0 } } } }, F.spatial_transformer_sampler(x, g).array:totable())
  end)
  it('im2col rejects bad geometry', function()
    assert.error_matches(function() F.im2col(T.zeros({ 1, 1, 2, 2 }), 3) end, 'im2col: the kernel')
    assert.error_matches(function() F.im2col(T.zeros({ 2, 2 }), 1) end, 'im2col: x must be')
    assert.error_matches(function() F.im2col(T.zeros({ 1, 1, 2, 2 }), { 1, 2, 3 }) end, 'im2col: ksize must be')
  end)
end)

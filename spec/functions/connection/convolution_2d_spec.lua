-- Specs for F.convolution_2d: forward against a naive reference
-- (conv_reference.lua), backward and double backward by finite
-- differences, options (stride, pad, cover_all, dilate, groups), the 1x1
-- direct path, non-contiguous inputs, thread-count independence, errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = dofile('spec/functions/connection/conv_reference.lua')

local function inputs(n, c, h, w, co, cg, kh, kw, bias)
  return function(dtype)
    local xs = { T.random.uniform(-1, 1, { n, c, h, w }, dtype), T.random.uniform(-1, 1, { co, cg, kh, kw }, dtype) }
    if bias then xs[3] = T.random.uniform(-1, 1, { co }, dtype) end
    return xs
  end
end

local tol = R.tol

local cases = {
  { name = 'default', opts = {}, make = inputs(2, 2, 4, 5, 3, 2, 3, 3, true), double = true },
  { name = 'stride2 pad1', opts = { stride = 2, pad = 1 }, make = inputs(2, 2, 5, 5, 3, 2, 3, 3, true) },
  { name = 'stride (2,1) pad (1,0)', opts = { stride = { 2, 1 }, pad = { 1, 0 } }, make = inputs(1, 2, 5, 4, 2, 2, 3, 2, true) },
  { name = 'cover_all', opts = { stride = 3, pad = 1, cover_all = true }, make = inputs(2, 2, 6, 6, 2, 2, 3, 3, true) },
  { name = 'dilate2', opts = { pad = 2, dilate = 2 }, make = inputs(1, 2, 5, 5, 2, 2, 3, 3, true) },
  { name = 'groups2', opts = { pad = 1, groups = 2 }, make = inputs(1, 4, 3, 3, 4, 2, 2, 2, true), double = true },
  { name = 'nobias 1x1 (direct path)', opts = {}, make = inputs(2, 3, 3, 4, 2, 3, 1, 1, false) },
  { name = 'nobias 1x1 groups3', opts = { groups = 3 }, make = inputs(2, 3, 3, 3, 3, 1, 1, 1, false) },
}

for _, case in ipairs(cases) do
  function_spec.describe('F.convolution_2d ' .. case.name, {
    fn = function(x, W, b) return F.convolution_2d(x, W, b, case.opts) end,
    inputs = case.make,
    reference = function(x, W, b) return R.conv(x, W, b, case.opts) end,
    double_backward = case.double,
    backward_tol = tol,
  })
end

-- float16 (mixed16's activations): the kernels run in float32 and round
-- each result once, so the Lua reference (in doubles) matches to float16's
-- precision, and the gradients to the finite differences of float64 copies
for _, case in ipairs({ cases[1], cases[6], cases[7] }) do
  function_spec.describe('F.convolution_2d float16 ' .. case.name, {
    fn = function(x, W, b) return F.convolution_2d(x, W, b, case.opts) end,
    inputs = case.make,
    reference = function(x, W, b) return R.conv(x, W, b, case.opts) end,
    dtypes = { 'float16' },
    double_backward = true,
  })
end

describe('F.convolution_2d', function()
  it('computes a hand-checked 2x2 example', function()
    local x = T.array({ { { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } } } }, 'float64')
    local W = T.array({ { { { 1, 0 }, { 0, -1 } } } }, 'float64')
    local y = F.convolution_2d(x, W, T.array({ 10 }, 'float64'))
    -- y[i,j] = x[i,j] - x[i+1,j+1] + 10 = 6 everywhere
    assert.same({ { { { 6, 6 }, { 6, 6 } } } }, y.array:totable())
    assert.same({ 1, 1, 2, 2 }, y.shape)
  end)

  it('accepts Chainer positional stride, pad, cover_all', function()
    T.random.seed(1)
    local x = T.random.uniform(-1, 1, { 1, 2, 7, 7 }, 'float64')
    local W = T.random.uniform(-1, 1, { 3, 2, 3, 3 }, 'float64')
    local a = F.convolution_2d(x, W, nil, 2, 1, true)
    local b = F.convolution_2d(x, W, { stride = 2, pad = 1, cover_all = true })
    assert.same(b.shape, a.shape)
    chainer.testing.assert_allclose(a.array, b.array, { atol = 0, rtol = 0 })
    chainer.testing.assert_allclose(a.array, R.conv(x, W, nil, { stride = 2, pad = 1, cover_all = true }), { atol = 1e-12 })
  end)

  it('takes non-contiguous (transposed, negative-stride) inputs', function()
    T.random.seed(2)
    local x = T.random.uniform(-1, 1, { 2, 3, 5, 4 }, 'float32'):transpose(0, 1, 3, 2)
    local W = T.random.uniform(-1, 1, { 2, 3, 3, 3 }, 'float32'):flip(3)
    local y = F.convolution_2d(x, W)
    chainer.testing.assert_allclose(y.array, R.conv(x:copy(), W:copy(), nil, {}), { atol = 1e-5, rtol = 1e-4 })
  end)

  it('batches larger than one gemm group match per-image results, for any thread count', function()
    T.random.seed(3)
    local x = T.random.uniform(-1, 1, { 37, 3, 6, 6 }, 'float32')
    local W = chainer.Variable(T.random.uniform(-1, 1, { 4, 3, 3, 3 }, 'float32'))
    local gy = T.random.uniform(-1, 1, { 37, 4, 4, 4 }, 'float32')
    local C = T.C
    local nt = C.ch_get_num_threads()
    local res = {}
    for k, th in ipairs({ 1, 2 }) do
      C.ch_set_num_threads(th)
      local xv = chainer.Variable(x)
      local y = F.convolution_2d(xv, W)
      y.grad = gy
      W:cleargrad()
      y:backward()
      res[k] = { y.array, xv.grad, W.grad }
    end
    C.ch_set_num_threads(nt)
    for i = 1, 3 do chainer.testing.assert_allclose(res[1][i], res[2][i], { atol = 0, rtol = 0 }) end
    -- image 5 alone gives the same output
    local y5 = F.convolution_2d(x:slice({ 5, 6 }), W)
    chainer.testing.assert_allclose(y5.array, res[1][1]:slice({ 5, 6 }), { atol = 1e-6, rtol = 1e-5 })
    chainer.testing.assert_allclose(res[1][1], R.conv(x, W.array, nil, {}), { atol = 1e-5, rtol = 1e-4 })
  end)

  it('handles size-1 and empty batches', function()
    local W = T.ones({ 2, 1, 2, 2 }, 'float32')
    local y = F.convolution_2d(T.ones({ 1, 1, 2, 2 }, 'float32'), W)
    assert.same({ { { { 4 } }, { { 4 } } } }, y.array:totable())
    local e = F.convolution_2d(T.ones({ 0, 1, 3, 3 }, 'float32'), W)
    assert.same({ 0, 2, 2, 2 }, e.shape)
  end)

  it('rejects bad inputs with clear messages', function()
    local x = T.ones({ 1, 3, 5, 5 })
    local W = T.ones({ 2, 3, 3, 3 })
    R.errors_with(function() F.convolution_2d(T.ones({ 3, 5, 5 }), W) end, 'convolution_2d', 'x must be 4-d')
    R.errors_with(function() F.convolution_2d(x, T.ones({ 2, 4, 3, 3 })) end, 'convolution_2d', 'channels')
    R.errors_with(function() F.convolution_2d(x, W, T.ones({ 3 })) end, 'convolution_2d', 'b must have shape (2,)')
    R.errors_with(function() F.convolution_2d(x, W:astype('float64')) end, 'convolution_2d', 'dtypes')
    R.errors_with(function() F.convolution_2d(x, W, nil, { stride = 0 }) end, 'convolution_2d', 'stride')
    R.errors_with(function() F.convolution_2d(x, W, nil, { strid = 2 }) end, 'convolution_2d', "unknown option 'strid'")
    R.errors_with(function() F.convolution_2d(T.ones({ 1, 3, 2, 2 }), W) end, 'convolution_2d', 'empty')
    R.errors_with(function() F.convolution_2d(x, W, nil, { groups = 2 }) end, 'convolution_2d', 'groups')
    R.errors_with(function() F.convolution_2d(x:astype('int32'), W:astype('int32')) end, 'convolution_2d', 'floating point')
  end)
end)

-- Specs for chainer.memory_layouts (Chainer 7's experimental memory
-- layouts): Variable.layout/as_layout, AsLayout's gradient, the layout
-- checks of FunctionNode.apply, and the functions that accept channel-last
-- inputs (their numbers and gradients equal the standard layout's).
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local Variable = chainer.Variable
local ML = chainer.memory_layouts
local helpers = require 'helpers'
local errors_with, vals = helpers.errors_with, helpers.vals
local assert_allclose = chainer.testing.assert_allclose

local LAST_X, LAST_W = ML.CUDNN_CHANNEL_LAST_X, ML.CUDNN_CHANNEL_LAST_W

local function uniform(shape) return T.random.uniform(-1, 1, shape) end

-- f(standard inputs) against f(channel-last inputs): the same output (after
-- converting back) and the same gradients for every input.
local function same_as_standard(f, arrays, to_last)
  local std, last = {}, {}
  for i, a in ipairs(arrays) do
    std[i] = Variable(a:copy())
    last[i] = Variable(a:copy())
  end
  local converted = {}
  for i, v in ipairs(last) do converted[i] = to_last[i] and v:as_layout(to_last[i]) or v end
  local y0 = f(table.unpack(std))
  local y1 = f(table.unpack(converted))
  assert.equal(LAST_X, y1.layout)
  assert.same(y0.shape, y1.shape)
  local y1s = y1:as_layout(nil)
  assert_allclose(y1s.array, y0.array, { atol = 1e-5, rtol = 1e-5 })
  local gy = uniform(y0.shape)
  F.sum(y0 * Variable(gy)):backward()
  F.sum(y1s * Variable(gy)):backward()
  for i = 1, #arrays do
    assert_allclose(last[i].grad, std[i].grad, { atol = 1e-5, rtol = 1e-5 })
  end
end

describe('chainer.memory_layouts', function()
  -- Layouts stay live for the rest of the process once used; the later
  -- spec files of this busted run should exercise the standard fast paths.
  lazy_teardown(function() ML.state.live = false end)

  it('has Chainer\'s layout names (nil: the standard layout)', function()
    assert.is_nil(ML.CUDNN_CHANNEL_FIRST_X)
    assert.is_nil(ML.CUDNN_CHANNEL_FIRST_W)
    assert.equal('CUDNN_CHANNEL_LAST_X', LAST_X)
    assert.equal('CUDNN_CHANNEL_LAST_W', LAST_W)
  end)

  it('gives a Variable its semantic shape, and its raw array only as raw_array', function()
    local raw = T.arange(24):astype('float32'):reshape({ 1, 2, 3, 4 })   -- (N, H, W, C)
    local v = Variable(raw, { layout = LAST_X })
    assert.equal(LAST_X, v.layout)
    assert.same({ 1, 4, 2, 3 }, v.shape)
    assert.same({ 1, 2, 3, 4 }, v.raw_array.shape)
    assert.same({ 1, 2, 3, 4 }, ML.get_raw_shape(v))
    assert.same({ 1, 4, 2, 3 }, ML.get_semantic_shape(v))
    assert.same({ 1, 4, 2, 3 }, ML.get_semantic_shape(raw, { assumed_layout = LAST_X }))
    assert.same({ 1, 2, 3, 4 }, ML.get_semantic_shape(raw))
    errors_with(function() return v.array end, 'Variable.array', 'CUDNN_CHANNEL_LAST_X', 'raw_array')
    errors_with(function() v.layout = nil end, 'read-only')
    assert.equal(LAST_X, v.layout)
    assert.is_nil(Variable(raw).layout)
  end)

  it('round-trips through as_layout, and returns the variable itself for its own layout', function()
    local x = Variable(uniform({ 2, 3, 4, 5 }))
    assert.equal(x, x:as_layout(nil))
    local xl = x:as_layout(LAST_X)
    assert.equal(xl, xl:as_layout(LAST_X))
    assert.same({ 2, 3, 4, 5 }, xl.shape)
    assert.same({ 2, 4, 5, 3 }, xl.raw_array.shape)
    -- the raw array is the NHWC transpose of the data
    assert.same(vals(x.array:transpose({ 0, 2, 3, 1 }):contiguous()), vals(xl.raw_array))
    local back = xl:as_layout(nil)
    assert.is_nil(back.layout)
    assert.same(vals(x.array), vals(back.array))
    local w = Variable(uniform({ 6, 3, 2, 2 })):as_layout(LAST_W)
    assert.same({ 6, 2, 2, 3 }, w.raw_array.shape)
    assert.same({ 6, 3, 2, 2 }, w:as_layout(nil).shape)
  end)

  it('passes the gradient back through AsLayout in the input\'s layout', function()
    local x = Variable(uniform({ 2, 3, 2, 2 }))
    local xl = x:as_layout(LAST_X)
    local gy = uniform({ 2, 2, 2, 3 })   -- a gradient is shaped like the raw array
    xl.grad = gy
    xl:backward()
    assert.same(vals(gy:transpose({ 0, 3, 1, 2 }):contiguous()), vals(x.grad))
    -- and numerically, with double backward
    local function f(a) return F.sin(a:as_layout(LAST_X):as_layout(nil)) * 1 end
    chainer.gradient_check.check_backward(f, { uniform({ 2, 3, 2, 2 }) }, uniform({ 2, 3, 2, 2 }))
    chainer.gradient_check.check_double_backward(f, { uniform({ 2, 3, 2, 2 }) }, uniform({ 2, 3, 2, 2 }),
      { uniform({ 2, 3, 2, 2 }) })
  end)

  it('records input_layouts and output_layouts on the nodes', function()
    local x = Variable(uniform({ 1, 2, 2, 2 }))
    local xl = x:as_layout(LAST_X)
    local node = xl.creator
    assert.is_nil(node.input_layouts[1])
    assert.equal(LAST_X, node.output_layouts[1])
    local y = F.relu(xl)   -- elementwise: the output takes the input's layout
    assert.equal(LAST_X, y.layout)
    assert.equal(LAST_X, y.creator.input_layouts[1])
    assert.equal(LAST_X, y.creator.output_layouts[1])
  end)

  it('refuses non-standard layouts in functions that do not accept them', function()
    local xl = Variable(uniform({ 1, 2, 2, 2 })):as_layout(LAST_X)
    errors_with(function() return F.tanh(xl) end, 'Tanh', 'non-standard memory layouts', 'CUDNN_CHANNEL_LAST_X')
    errors_with(function() return F.sum(xl) end, 'Sum', 'CUDNN_CHANNEL_LAST_X')
    -- (a plain tensor input as well as a Variable)
    errors_with(function() return F.linear(xl:as_layout(nil):reshape(1, 8), T.ones({ 2, 8 })):as_layout(LAST_X) end,
      '3 or more axes')
  end)

  it('refuses mixed layouts in an elementwise function, and accepts one layout', function()
    local x = Variable(uniform({ 1, 2, 2, 2 }))
    local xl = x:as_layout(LAST_X)
    errors_with(function() return xl + x end, 'mixed memory layouts', 'CUDNN_CHANNEL_LAST_X, None')
    local y = xl * xl + xl
    assert.equal(LAST_X, y.layout)
    assert_allclose(y:as_layout(nil).array, (x * x + x).array)
  end)

  it('lets a FunctionNode accept layouts through check_layout_forward', function()
    local Double = chainer.FunctionNode:extend('Double')
    function Double:check_layout_forward(inputs) self.output_layouts = { self.input_layouts[1], n = 1 } end
    function Double:forward(inputs) return { inputs[1] * 2 } end
    function Double:backward(idx, gys) return { gys[1] * 2 } end
    local xl = Variable(uniform({ 1, 2, 2, 2 })):as_layout(LAST_X)
    local y = Double():apply({ xl })[1]
    assert.equal(LAST_X, y.layout)
    assert_allclose(y.raw_array, xl.raw_array * 2)
  end)

  it('rejects unknown layouts and arrays of fewer than 3 axes', function()
    errors_with(function() return Variable(T.ones({ 2, 3, 4 }), { layout = 'NHWC' }) end, 'unknown memory layout', 'NHWC')
    errors_with(function() return Variable(T.ones({ 2, 3 }), { layout = LAST_X }) end, '3 or more axes')
    errors_with(function() return Variable(T.ones({ 2, 3, 4 })):as_layout('NCHW') end, 'as_layout', 'NCHW')
  end)

  describe('functions accepting channel-last inputs', function()
    it('convolution_2d: x and W channel-last, or x alone', function()
      local x, W, b = uniform({ 2, 3, 5, 5 }), uniform({ 4, 3, 3, 3 }), uniform({ 4 })
      local function conv(a, w, c) return F.convolution_2d(a, w, c, { stride = 2, pad = 1 }) end
      same_as_standard(conv, { x, W, b }, { LAST_X, LAST_W })
      same_as_standard(conv, { x, W, b }, { LAST_X })
      errors_with(function() return conv(Variable(x), Variable(W):as_layout(LAST_X), b) end,
        'convolution_2d', 'invalid memory layout for W', 'CUDNN_CHANNEL_LAST_X')
    end)

    it('deconvolution_2d', function()
      local x, W, b = uniform({ 2, 3, 3, 3 }), uniform({ 3, 4, 3, 3 }), uniform({ 4 })
      local function deconv(a, w, c) return F.deconvolution_2d(a, w, c, { stride = 2, pad = 1 }) end
      same_as_standard(deconv, { x, W, b }, { LAST_X, LAST_W })
    end)

    it('batch_normalization (gamma and beta in the standard layout)', function()
      local x, gamma, beta = uniform({ 4, 3, 2, 2 }), uniform({ 3 }), uniform({ 3 })
      same_as_standard(F.batch_normalization, { x, gamma, beta }, { LAST_X })
      local rm0, rm1 = T.zeros({ 3 }), T.zeros({ 3 })
      F.batch_normalization(Variable(x), gamma, beta, { running_mean = rm0 })
      F.batch_normalization(Variable(x):as_layout(LAST_X), gamma, beta, { running_mean = rm1 })
      assert_allclose(rm1, rm0)
      errors_with(function() return F.batch_normalization(Variable(x), Variable(uniform({ 1, 1, 3 })):as_layout(LAST_X), beta) end,
        'batch_normalization', 'invalid memory layout for argument 2')
    end)
  end)
end)

-- Shapes as users type them (issue 18): every creation and random function
-- takes its shape as a table or as numbers, and a number is never a dtype.
local T = require 'chainer.tensor'
local R = T.random
local H = require 'helpers'

local function same_shape(expected, t)
  assert.are.same(expected, t.shape)
end

describe('shape arguments', function()
  it('zeros, ones and empty take the shape as numbers, like torch', function()
    local z = T.zeros(3, 4)
    same_shape({ 3, 4 }, z)
    assert.are.equal('float32', z.dtype)
    assert.are.equal(12, z.size)
    assert.are.equal(0, z:abs():sum():item())
    same_shape({ 2, 3 }, T.ones(2, 3))
    assert.are.equal(6, T.ones(2, 3):sum():item())
    same_shape({ 2, 3, 4 }, T.empty(2, 3, 4))
    same_shape({ 5 }, T.zeros(5))
  end)

  it('the numbers may be followed by a dtype and a device', function()
    local z = T.zeros(2, 3, 'int32', 'cpu')
    same_shape({ 2, 3 }, z)
    assert.are.equal('int32', z.dtype)
    assert.are.equal('cpu', z.device)
    assert.are.equal('float64', T.ones(4, 'float64').dtype)
    assert.are.equal('int16', T.empty({ 2, 2 }, 'int16').dtype)
  end)

  it('the table form is unchanged', function()
    same_shape({ 3, 4 }, T.zeros({ 3, 4 }))
    same_shape({}, T.zeros({}))
    same_shape({ 3, 4 }, T.ones({ 3, 4 }, 'float64', -1))
  end)

  it('every sampler of chainer.tensor.random takes numbers too', function()
    same_shape({ 2, 3 }, R.rand(2, 3))
    same_shape({ 2, 3 }, R.randn(2, 3))
    assert.are.equal('float32', R.randn(2, 3).dtype)
    assert.are.equal('float64', R.randn(2, 3, 'float64').dtype)
    same_shape({ 4, 5 }, R.uniform(-1, 1, 4, 5))
    same_shape({ 4, 5 }, R.normal(0, 2, 4, 5))
    same_shape({ 3, 2 }, R.bernoulli(0.5, 3, 2))
    local k = R.randint(0, 10, 3, 4)
    same_shape({ 3, 4 }, k)
    assert.are.equal('int64', k.dtype)
    assert.are.equal('int32', R.randint(0, 10, 3, 4, 'int32').dtype)
    same_shape({ 6 }, R.rand(6))
    same_shape({ 2, 2 }, R.rand({ 2, 2 }))
  end)

  it('numbers and tables give the same random numbers', function()
    R.seed(7)
    local a = R.randn(3, 4)
    R.seed(7)
    local b = R.randn({ 3, 4 })
    assert.are.same(a:totable(), b:totable())
  end)

  it('full takes one shape and then the value, as NumPy and torch do', function()
    local f = T.full(3, 7)
    same_shape({ 3 }, f)
    assert.are.same({ 7, 7, 7 }, f:totable())
    same_shape({ 2, 3 }, T.full({ 2, 3 }, 1.5))
    H.errors_with(function() T.full(3, 4, 7) end, 'full:', 'full({3, 4}, 7)')
  end)

  it('a shape entry that is not an integer is named', function()
    H.errors_with(function() T.zeros(3, 4.5) end, 'zeros:', 'shape entry 2', '4.5')
    H.errors_with(function() R.rand(2, 0.5) end, 'uniform:', 'shape entry 2')
  end)
end)

describe('dtypes are names, never numbers', function()
  it('a number where a dtype goes says what to pass', function()
    H.errors_with(function() T.zeros({ 3 }, 3) end, 'zeros:', "dtype must be a name such as 'float32'",
      'got the number 3')
    H.errors_with(function() T.array({ 1, 2 }, 4) end, 'array:', "'float32'", 'the number 4')
    H.errors_with(function() T.ones(2):astype(9) end, 'astype:', 'the number 9')
    H.errors_with(function() T.arange(3, nil, nil, 5) end, 'arange:', 'the number 5')
    H.errors_with(function() R.rand({ 2 }, 8) end, "'float32'", 'the number 8')
    H.errors_with(function() R.randint(0, 3, { 2 }, 5) end, 'randint:', 'the number 5')
  end)

  it('names and aliases work', function()
    assert.are.equal('float64', T.zeros({ 2 }, 'double').dtype)
    assert.are.equal('int64', T.zeros({ 2 }, 'long').dtype)
    assert.are.equal('float32', T.ones(2):astype('float32').dtype)
  end)

  it('F.cast refuses a number as the type', function()
    local F = require 'chainer.functions'
    H.errors_with(function() F.cast(T.ones(2), 3) end, 'cast:', "'float32'", '(got 3)')
  end)
end)

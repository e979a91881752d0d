-- chainer.testing's fix_random/generate_seed, generate_matrix, assert_warns
-- and with_requires/without_requires.
local chainer = require 'chainer'
local T = chainer.tensor
local testing = require 'chainer.testing'
local warnings = require 'chainer.utils.warnings'

local err_of = require('helpers').err_of

describe('testing.fix_random', function()
  it('draws from the stream seeded with 100 and restores every state afterwards', function()
    T.random.seed(7)
    T.random.normal(0, 1, { 5 })                       -- advance the CPU stream
    local before = T.random.get_state()
    local before_gpu = T.random.get_state(3)
    local inside = testing.fix_random(function() return T.random.uniform(0, 1, { 4 }, 'float64'):tolist() end)()
    -- the same draws as a fresh seed 100, found independently
    T.random.seed(100)
    local expected = T.random.uniform(0, 1, { 4 }, 'float64'):tolist()
    assert.are.same(expected, inside)
    T.random.set_state(before)
    T.random.set_state(before_gpu, 3)
    -- the wrapped run changed nothing outside
    local again = testing.fix_random(function() return 0 end)
    again()
    assert.are.same(before, T.random.get_state())
    assert.are.same(before_gpu, T.random.get_state(3))
  end)

  it('restores the state when the test fails, and passes the failure on', function()
    T.random.seed(11)
    local before = T.random.get_state()
    local failing = testing.fix_random(function() T.random.rand(3); error('boom') end)
    assert.matches('boom', err_of(failing))
    assert.are.same(before, T.random.get_state())
    assert.is_false(require('chainer.testing.random').is_fixed())
  end)

  it('nests: only the outermost scope seeds and restores', function()
    local outer = testing.fix_random(function()
      local a = T.random.rand(2):tolist()
      local b = testing.fix_random(function() return T.random.rand(2):tolist() end)()
      return a, b
    end)
    local a, b = outer()
    T.random.seed(100)
    local ref = T.random.rand(4):tolist()
    assert.are.same({ ref[1], ref[2] }, a)
    assert.are.same({ ref[3], ref[4] }, b)
  end)

  it('generate_seed draws an integer from the fixed stream, only inside a scope', function()
    local s1 = testing.fix_random(testing.generate_seed)()
    local s2 = testing.fix_random(testing.generate_seed)()
    assert.are.equal(s1, s2)
    assert.is_true(s1 >= 0 and s1 < 4294967295 and s1 == math.floor(s1))
    assert.matches('generate_seed: random is not set up', err_of(testing.generate_seed))
    assert.matches('fix_random: expected a test function or nothing %(got number%)', err_of(testing.fix_random, 3))
  end)

  describe('called inside a describe block', function()
    testing.fix_random()
    it('seeds each test', function()
      local got = T.random.rand(3):tolist()
      local state = T.random.get_state()
      T.random.seed(100)
      assert.are.same(T.random.rand(3):tolist(), got)
      T.random.set_state(state)
    end)
  end)
end)

describe('testing.generate_matrix', function()
  -- For A with singular values s: trace(A A^T) = sum s^2 and
  -- trace((A A^T)^2) = sum s^4; det(A A^T) = prod s^2 when A is square.
  local function moments(a)
    local g = T.matmul(a, a:transpose())
    return g:trace():item(), T.matmul(g, g):trace():item(), g
  end

  it('has the given singular values, for wide, tall and square matrices', function()
    for _, case in ipairs { { { 3, 5 }, { 3, 2, 0.5 } }, { { 4, 2 }, { 1.5, 1 } }, { { 3, 3 }, { 2, 1, 0.25 } } } do
      local shape, sv = case[1], case[2]
      local a = testing.generate_matrix(shape, { singular_values = sv })
      assert.are.same(shape, a.shape)
      assert.are.equal('float64', a.dtype)
      local s2, s4 = 0, 0
      for _, s in ipairs(sv) do s2, s4 = s2 + s ^ 2, s4 + s ^ 4 end
      local m2, m4 = moments(shape[1] <= shape[2] and a or a:transpose())
      assert.is_near(s2, m2, 1e-10)
      assert.is_near(s4, m4, 1e-10)
    end
    local sq = testing.generate_matrix({ 3, 3 }, { singular_values = { 2, 1, 0.25 } })
    assert.is_near(0.5, math.abs(sq:det():item()), 1e-12)   -- |det| = 2 * 1 * 0.25
  end)

  it('broadcasts the singular values over a stack, in the dtype asked', function()
    local a = testing.generate_matrix({ 2, 3, 3 }, 'float32', { singular_values = 1 })
    assert.are.equal('float32', a.dtype)
    for b = 0, 1 do                                   -- orthogonal: A A^T = I
      testing.assert_allclose(T.matmul(a:select(b), a:select(b):transpose()), T.eye(3), { atol = 1e-5 })
    end
    local per = testing.generate_matrix({ 2, 2, 3 }, { singular_values = { { 1, 2 }, { 3, 4 } } })
    assert.is_near(5, moments(per:select(0)), 1e-10)
    assert.is_near(25, moments(per:select(1)), 1e-10)
    assert.are.same({ 0, 3 }, testing.generate_matrix({ 0, 3 }, { singular_values = {} }).shape)
  end)

  it('refuses what Chainer refuses', function()
    local gm = testing.generate_matrix
    assert.matches('shape {4} is invalid for matrices: too few axes', err_of(gm, { 4 }, { singular_values = 1 }))
    assert.matches('dtype int32 is not supported', err_of(gm, { 2, 2 }, 'int32', { singular_values = 1 }))
    assert.matches('singular_values is not given', err_of(gm, { 2, 2 }))
    assert.matches('negative singular value is given', err_of(gm, { 2, 2 }, { singular_values = { 1, -1 } }))
    assert.matches('cannot be broadcast to {2}', err_of(gm, { 2, 3 }, { singular_values = { 1, 2, 3 } }))
    assert.matches("unknown option 'singular_value'", err_of(gm, { 2, 2 }, { singular_value = 1 }))
  end)
end)

describe('testing.assert_warns', function()
  it('passes when the category is warned and returns what was caught', function()
    require('chainer.utils.experimental').reset()
    local caught = testing.assert_warns('FutureWarning', function() chainer.utils.experimental('spec.Thing') end)
    assert.are.equal(1, #caught)
    assert.are.equal('spec.Thing is experimental. Signatures and behaviors may change in the future.',
      caught[1].message)
    testing.assert_warns('Warning', function() warnings.warn('RuntimeWarning', 'x') end)
    testing.assert_warns('UserWarning', function() warnings.warn('UserWarning', 'value 42 ignored') end,
      { match = 'value %d+' })
  end)

  it('fails when nothing (or another category, or another message) is warned', function()
    assert.matches('assert_warns: UserWarning not triggered %(caught: no warning%)',
      err_of(testing.assert_warns, 'UserWarning', function() end))
    assert.matches('UserWarning not triggered %(caught: FutureWarning: f%)',
      err_of(testing.assert_warns, 'UserWarning', function() warnings.warn('FutureWarning', 'f') end))
    assert.matches("UserWarning matching 'z' not triggered",
      err_of(testing.assert_warns, 'UserWarning', function() warnings.warn('UserWarning', 'a') end, { match = 'z' }))
    assert.matches('boom', err_of(testing.assert_warns, 'UserWarning', function() error('boom') end))
    assert.matches('assert_warns: fn must be a function', err_of(testing.assert_warns, 'UserWarning', 3))
    assert.matches("unknown option 'pattern'", err_of(testing.assert_warns, 'UserWarning', function() end,
      { pattern = 'x' }))
  end)

  it('catches the warnings of config.warn_nondeterministic, which otherwise go to their output', function()
    local N = require 'chainer.utils.nondeterministic'
    local written = {}
    N.output = { write = function(_, ...) for _, s in ipairs { ... } do written[#written + 1] = s end end }
    chainer.using_config('warn_nondeterministic', true, function()
      testing.assert_warns('UserWarning', function() chainer.utils.nondeterministic('f') end, { match = 'Source: f' })
      assert.are.equal(0, #written)
      chainer.utils.nondeterministic('g')
    end)
    N.output = io.stderr
    assert.matches('^UserWarning: Potentially non%-deterministic code .* Source: g\n$', table.concat(written))
  end)
end)

describe('testing.with_requires / without_requires', function()
  it('runs the test when every requirement is there, else marks it pending', function()
    local ran = 0
    testing.with_requires('chainer.tensor', 'string', function() ran = ran + 1 end)()
    assert.are.equal(1, ran)
    local skipped
    local real_pending = pending
    pending = function(reason) skipped = reason end       -- busted's pending, observed
    testing.with_requires('chainer.tensor', 'no_such_module_x', function() ran = ran + 1 end)()
    testing.without_requires('chainer.tensor', function() ran = ran + 1 end)()
    pending = real_pending
    assert.are.equal(1, ran)
    assert.are.equal('runs only without chainer.tensor', skipped)
    testing.without_requires('chainer.tensor', 'no_such_module_x', function() ran = ran + 1 end)()
    assert.are.equal(2, ran)
  end)

  it('knows the optional parts by name', function()
    local H = require 'chainer.testing.helper'
    assert.are.equal(chainer.cuda.available, H.available('cuda'))
    assert.are.equal(require('chainer.links.caffe._net').available(), H.available('caffe'))
    assert.is_false(H.available('no_such_module_x'))
    assert.matches('with_requires: expected one or more requirements then the test function',
      err_of(testing.with_requires, 'cuda'))
    assert.matches('requirement 1 must be a non%-empty string', err_of(testing.without_requires, 3, function() end))
  end)
end)

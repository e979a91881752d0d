-- L.StatefulZoneoutLSTM and L.Parameter
local chainer = require 'chainer'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions
local gradient_check = chainer.gradient_check

local helpers = require 'helpers'
local close = helpers.close

local function make(c_ratio, h_ratio)
  T.random.seed(3)
  return chainer.using_config('dtype', 'float64', function()
    return L.StatefulZoneoutLSTM(3, 4, c_ratio, h_ratio)
  end)
end

-- One LSTM step by hand (gates interleaved per unit: a, i, f, o).
local function lstm_step(l, x, c, h)
  local z = F.linear(x, l.upward.W.array, l.upward.b.array)
  if h then z = z + F.linear(h, l.lateral.W.array) end
  local g = F.split_axis(F.reshape(z, { x.shape[1], 4, 4 }), 4, 2)
  local function gate(k) return F.reshape(g[k], { x.shape[1], 4 }) end
  local c_new = F.tanh(gate(1)) * F.sigmoid(gate(2)) + F.sigmoid(gate(3)) * c
  return c_new, F.sigmoid(gate(4)) * F.tanh(c_new)
end

describe('L.StatefulZoneoutLSTM', function()
  it('has upward (4*out, in) with a bias and lateral (4*out, out) without', function()
    local l = make()
    assert.are.same({ 16, 3 }, l.upward.W.shape)
    assert.are.same({ 16 }, l.upward.b.shape)
    assert.are.same({ 16, 4 }, l.lateral.W.shape)
    assert.is_nil(l.lateral.b)
    assert.are.equal(0.5, l.c_ratio)
    assert.are.equal(0.5, l.h_ratio)
  end)

  it('is a plain LSTM in test mode, keeping its state over two steps', function()
    local l = make()
    local x0, x1 = T.random.uniform(-1, 1, { 2, 3 }, 'float64'), T.random.uniform(-1, 1, { 2, 3 }, 'float64')
    local h0, h1 = chainer.using_config('train', false, function() return l(x0), l(x1) end)
    local c, h = lstm_step(l, x0, T.zeros({ 2, 4 }, 'float64'), nil)
    close(h0, h, 1e-12)
    c, h = lstm_step(l, x1, c, h)
    close(h1, h, 1e-12)
    close(l.c, c, 1e-12)
  end)

  it('with c_ratio 1, h_ratio 0 in training keeps c at zero and outputs the new h', function()
    local l = make(1.0, 0.0)
    local x0 = T.random.uniform(-1, 1, { 2, 3 }, 'float64')
    local h0 = l(x0)
    local _, h = lstm_step(l, x0, T.zeros({ 2, 4 }, 'float64'), nil)
    close(h0, h, 1e-12)
    assert.are.same(T.zeros({ 2, 4 }, 'float64'):totable(), l.c.array:totable())
  end)

  it('passes the gradient check over two steps (test mode) for x and the parameters', function()
    local l = make()
    local x0, x1 = T.random.uniform(-1, 1, { 2, 3 }, 'float64'), T.random.uniform(-1, 1, { 2, 3 }, 'float64')
    local function f(a, b)
      l:reset_state()
      return chainer.using_config('train', false, function()
        local h0 = l(a)
        return h0, l(b), l.c
      end)
    end
    local gys = { T.random.uniform(-1, 1, { 2, 4 }, 'float64'), T.random.uniform(-1, 1, { 2, 4 }, 'float64'),
      T.random.uniform(-1, 1, { 2, 4 }, 'float64') }
    gradient_check.check_backward(f, { x0, x1 }, gys, { l.upward.W, l.upward.b, l.lateral.W }, { atol = 1e-6, rtol = 1e-5 })
  end)

  it('reset_state and set_state', function()
    local l = make()
    l(T.ones({ 2, 3 }, 'float64'))
    assert.is_not_nil(l.h)
    l:reset_state()
    assert.is_nil(l.c)
    assert.is_nil(l.h)
    l:set_state(T.ones({ 2, 4 }, 'float64'), T.zeros({ 2, 4 }, 'float64'))
    assert.are.same({ 2, 4 }, l.c.shape)
  end)

  it('rejects bad arguments', function()
    assert.has_error(function() L.StatefulZoneoutLSTM(3, 0) end,
      'L.StatefulZoneoutLSTM: out_size must be a positive integer (got 0)')
    assert.has_error(function() L.StatefulZoneoutLSTM(3, 4, 1.5) end,
      'L.StatefulZoneoutLSTM: c_ratio must be a number in [0, 1] (got 1.5)')
    assert.has_error(function() L.StatefulZoneoutLSTM(3, 4, { train = true }) end)
    local l = make()
    assert.has_error(function() l(T.ones({ 3 }, 'float64')) end,
      'L.StatefulZoneoutLSTM: x must be 2-d (batch, in_size), got shape (3,)')
  end)
end)

describe('L.Parameter', function()
  it('holds a copy of the array as W and returns it, with the gradient reaching W', function()
    local a = T.array({ { 1, 2, 3 }, { 4, 5, 6 } }, 'float64')
    local l = L.Parameter(a)
    a:fill_(0)
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, l.W.array:totable())
    local y = l()
    close(y, l.W.array, 0)
    local gy = T.array({ { 1, -1, 2 }, { 0, 3, 1 } }, 'float64')
    y.grad = gy
    y:backward()
    close(l.W.grad, gy, 0)
    local names = {}
    for name in l:namedparams() do names[#names + 1] = name end
    assert.are.same({ '/W' }, names)
  end)

  it('rejects a missing array and call arguments', function()
    assert.has_error(function() L.Parameter() end)
    assert.has_error(function() L.Parameter(T.ones({ 2 }))('off') end, 'L.Parameter: the call takes no arguments')
  end)
end)

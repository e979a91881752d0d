-- L.SimplifiedDropconnect: forward and backward equal
-- F.simplified_dropconnect with the link's parameters and a given mask.
local chainer = require 'chainer'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions

local close = require('helpers').close
local check_same_as_function = require('links._support').check_same_as_function

describe('L.SimplifiedDropconnect', function()
  local function make()
    T.random.seed(7)
    return chainer.using_config('dtype', 'float64', function()
      return L.SimplifiedDropconnect(4, 3, 0.25, { initial_bias = 0.1 })
    end)
  end
  it('has W (out, in) and b (out)', function()
    local l = make()
    assert.are.same({ 3, 4 }, l.W.shape)
    assert.are.same({ 3 }, l.b.shape)
    assert.are.equal(0.25, l.ratio)
  end)
  it('with a mask: forward and backward equal F.simplified_dropconnect and the hand formula', function()
    local l = make()
    local x = T.random.uniform(-1, 1, { 2, 4 }, 'float64')
    local mask = T.ge(T.random.rand({ 2, 3, 4 }, 'float64'), 0.25):astype('float64')
    local y = check_same_as_function({
      link = function(xv) return l(xv, true, mask) end, x = x, params = { l.W, l.b }, tol = 1e-12,
      fn = function(xv, W, b) return F.simplified_dropconnect(xv, W, b, { ratio = 0.25, train = true, mask = mask }) end,
    })
    -- y[i, j] = sum_k x[i, k] W[j, k] mask[i, j, k] / 0.75 + b[j]
    local Wt, xt, mt, yt = l.W.array:totable(), x:totable(), mask:totable(), y.array:totable()
    for i = 1, 2 do
      for j = 1, 3 do
        local acc = 0.1
        for k = 1, 4 do acc = acc + xt[i][k] * Wt[j][k] * mt[i][j][k] / 0.75 end
        assert.is_true(math.abs(acc - yt[i][j]) < 1e-12)
      end
    end
  end)
  it('is the plain linear layer in test mode (train = false or config.train = false)', function()
    local l = make()
    local x = T.random.uniform(-1, 1, { 2, 4 }, 'float64')
    local ref = F.linear(x, l.W.array, l.b.array)
    close(l(x, false), ref, 1e-12)
    close(chainer.using_config('train', false, function() return l(x) end), ref, 1e-12)
  end)
  it('drops about ratio of the weights in training mode', function()
    local l = make()
    T.random.seed(11)
    local x = T.ones({ 400, 4 }, 'float64')
    local y = l(x)  -- config.train defaults to true
    -- each output is b + sum of the kept W[j, k] / 0.75; with all W = 1 that counts kept weights
    local ones = chainer.using_config('dtype', 'float64', function()
      return L.SimplifiedDropconnect(4, 3, 0.25, { initialW = 1, nobias = true })
    end)
    local kept = (ones(x).array * 0.75):mean():item() / 4
    assert.is_true(math.abs(kept - 0.75) < 0.05, 'kept fraction ' .. kept)
    assert.are.same({ 400, 3 }, y.shape)
  end)
  it('infers in_size at the first call', function()
    local l = L.SimplifiedDropconnect(nil, 5)
    l(T.ones({ 2, 3, 2 }), false)
    assert.are.same({ 5, 6 }, l.W.shape)
  end)
end)

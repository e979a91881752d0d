-- link_hooks.WeightStandardization: mean 0 / std 1 per output unit, values
-- against a hand computation, gradients by finite differences, errors.
local chainer = require 'chainer'
local H = require 'helpers'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions
local WS = chainer.link_hooks.WeightStandardization

local function linear(rows)
  return chainer.using_config('dtype', 'float64', function()
    return L.Linear(#rows[1], #rows, { nobias = true, initialW = T.array(rows, 'float64') })
  end)
end

-- The weight the link used: y = x W^T with x = I gives W^T.
local function used_weight(l)
  local y = l(T.eye(l.W.shape[2], 'float64'))
  return y.array:transpose():totable()
end

-- (w - mean) / (std + eps) per row, std the biased one: by hand.
local function standardized(rows, eps)
  local out = {}
  for i, r in ipairs(rows) do
    local n, mean, var = #r, 0, 0
    for _, w in ipairs(r) do mean = mean + w / n end
    for _, w in ipairs(r) do var = var + (w - mean) ^ 2 / n end
    local std = math.sqrt(var)
    out[i] = {}
    for j, w in ipairs(r) do out[i][j] = (w - mean) / (std + eps) end
  end
  return out
end

local ROWS = { { 1, 2, 4, 7 }, { -3, 0.5, 2, 0 }, { 0.1, 0.2, 0.3, 0.6 } }

describe('WeightStandardization', function()
  it('gives every output unit mean 0 and standard deviation std / (std + eps)', function()
    local l = linear(ROWS)
    l:add_hook(WS())
    local Wh = used_weight(l)
    for i = 1, 3 do
      local mean, var, raw_mean, raw_var = 0, 0, 0, 0
      for j = 1, 4 do mean, raw_mean = mean + Wh[i][j] / 4, raw_mean + ROWS[i][j] / 4 end
      for j = 1, 4 do var, raw_var = var + (Wh[i][j] - mean) ^ 2 / 4, raw_var + (ROWS[i][j] - raw_mean) ^ 2 / 4 end
      local std = math.sqrt(raw_var)
      assert.near(0, mean, 1e-12)
      assert.near(std / (std + 1e-5), math.sqrt(var), 1e-12)   -- eps = 1e-5 by default
    end
    assert.is_true(l.W._is_parameter)
  end)

  it('matches the hand computation, eps included', function()
    local l = linear(ROWS)
    l:add_hook(WS(0.5))
    local Wh, want = used_weight(l), standardized(ROWS, 0.5)
    for i = 1, 3 do
      for j = 1, 4 do assert.near(want[i][j], Wh[i][j], 1e-12) end
    end
  end)

  it('standardizes a convolution weight over all axes but the first', function()
    local c = L.Convolution2D(nil, 3, 2, { nobias = true })
    c:add_hook(WS{ eps = 0 })
    local y = c(T.ones({ 1, 2, 2, 2 }))   -- one window: y[k] = sum of unit k's weights
    assert.same({ 3, 2, 2, 2 }, c.W.shape)             -- initialised from the input
    for k = 0, 2 do assert.near(0, y.array:get(0, k, 0, 0), 1e-5) end   -- standardized weights sum to 0
  end)

  it('is differentiable: the gradient of W matches finite differences', function()
    local l = linear(ROWS)
    l:add_hook(WS())
    local x = T.array({ { 0.5, -0.2, 0.9, 1.5 }, { -1.0, 0.4, 0.3, -0.7 } }, 'float64')
    local gy = T.array({ { 1, -2, 0.5 }, { 0.7, 0.1, -1 } }, 'float64')
    local function loss() return F.sum(l(x) * gy) end
    H.check_matrix_grad(l.W, loss)
  end)

  it('gives a finite gradient for a unit whose weights are all equal', function()
    local l = linear({ { 2, 2, 2 }, { 1, 0, -1 } })
    l:add_hook(WS())
    l:cleargrads()
    F.sum(l(T.ones({ 1, 3 }, 'float64')) * T.array({ { 1, 1 } }, 'float64')):backward()
    for _, g in ipairs(H.vals(l.W.grad)) do assert.is_true(g == g and math.abs(g) < math.huge) end
  end)

  it('validates its options and the link', function()
    H.errors_with(function() WS{ epsilon = 1 } end, 'WeightStandardization', "'epsilon'")
    H.errors_with(function() WS(-1) end, 'eps')
    H.errors_with(function() L.Linear(2, 3):add_hook(WS{ weight_name = 'V' }) end, "no weight parameter 'V'")
    H.errors_with(function() WS():scope(function() end) end, 'not meant to be registered globally')
    local l = L.Linear(2, 3)
    l:add_hook(WS())
    H.errors_with(function() l:add_hook(WS()) end, 'already registered')
    local V = chainer.Link:extend('V')
    function V:init() self.W = chainer.Parameter(T.ones({ 3 })) end
    function V:forward(x) return x * self.W end
    local v = V()
    v:add_hook(WS())
    H.errors_with(function() v(T.ones({ 3 })) end, 'WeightStandardization', '2 or more dimensions')
    assert.is_true(v.W._is_parameter)
  end)
end)

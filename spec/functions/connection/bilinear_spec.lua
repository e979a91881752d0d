-- Specs for F.bilinear: the full form (W, V1, V2, b) and W only, gradients
-- and double gradients, errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = dofile('spec/functions/connection/conv_reference.lua')

local rnd = require('helpers').uniform

-- y[i,l] = sum_jk e1[i,j] e2[i,k] W[j,k,l] from the definition
local function ref(e1, e2, W, V1, V2, b)
  local a, c, w = e1:totable(), e2:totable(), W:totable()
  local N, J, K, L = e1.shape[1], W.shape[1], W.shape[2], W.shape[3]
  local y = {}
  for i = 1, N do
    y[i] = {}
    for l = 1, L do
      local s = 0
      for j = 1, J do for k = 1, K do s = s + a[i][j] * c[i][k] * w[j][k][l] end end
      y[i][l] = s
    end
  end
  local out = T.array(y, e1.dtype)
  if V1 then out = out + T.matmul(e1, V1) + T.matmul(e2, V2) + b end
  return out
end

function_spec.describe('F.bilinear full', {
  fn = function(e1, e2, W, V1, V2, b) return F.bilinear(e1, e2, W, V1, V2, b) end,
  inputs = function(dt) return { rnd({ 3, 2 })(dt), rnd({ 3, 4 })(dt), rnd({ 2, 4, 5 })(dt), rnd({ 2, 5 })(dt),
    rnd({ 4, 5 })(dt), rnd({ 5 })(dt) } end,
  reference = ref,
  double_backward = true,
})

function_spec.describe('F.bilinear W only', {
  fn = function(e1, e2, W) return F.bilinear(e1, e2, W) end,
  inputs = function(dt) return { rnd({ 2, 3 })(dt), rnd({ 2, 2 })(dt), rnd({ 3, 2, 2 })(dt) } end,
  reference = function(e1, e2, W) return ref(e1, e2, W) end,
})

describe('F.bilinear', function()
  it('rejects bad inputs with clear messages', function()
    local e1, e2, W = T.ones({ 2, 3 }), T.ones({ 2, 4 }), T.ones({ 3, 4, 5 })
    R.errors_with(function() F.bilinear(e1, e2, W, T.ones({ 3, 5 })) end, 'bilinear', 'all together')
    R.errors_with(function() F.bilinear(e1, T.ones({ 3, 4 }), W) end, 'bilinear', 'batch sizes')
    R.errors_with(function() F.bilinear(e1, e2, T.ones({ 3, 3, 5 })) end, 'bilinear', 'W has shape')
    R.errors_with(function() F.bilinear(e1, e2, W, T.ones({ 3, 4 }), T.ones({ 4, 5 }), T.ones({ 5 })) end,
      'bilinear', 'V1 must have shape (3, 5)')
  end)
end)

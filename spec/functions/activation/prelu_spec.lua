-- F.prelu, F.rrelu, F.crelu, F.maxout
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

local function away(shape)
  local x = U(-1, 1, shape, 'float64')
  return T.where(T.lt(T.abs(x), 0.05), x + 0.1, x)
end

function_spec.describe('F.prelu', {
  fn = function(x, W) return F.prelu(x, W) end,
  inputs = function(dt) return { away({ 3, 4, 2 }):astype(dt), U(-0.5, 0.5, { 4 }, dt) } end,
  reference = function(x, W) return T.where(T.ge(x, 0), x, x * W:reshape({ 1, 4, 1 })) end,
  double_backward = true,
})
function_spec.describe('F.prelu (2-d W)', {
  fn = function(x, W) return F.prelu(x, W) end,
  inputs = function(dt) return { away({ 2, 3, 4 }):astype(dt), U(-0.5, 0.5, { 3, 4 }, dt) } end,
  reference = function(x, W) return T.where(T.ge(x, 0), x, x * W) end,
})
function_spec.describe('F.rrelu (given r)', {
  fn = function(x, r) return F.rrelu(x, { r = r }) end,
  inputs = function(dt) return { away({ 3, 4 }):astype(dt), U(0.125, 0.34, { 3, 4 }, dt) } end,
  reference = function(x, r) return T.where(T.ge(x, 0), x, x * r) end,
  no_grads = { false, true },
})
function_spec.describe('F.crelu', {
  fn = function(x, o) return F.crelu(x, o) end,
  inputs = function(dt) return { away({ 3, 4, 2 }):astype(dt) } end,
  reference = function(x, o) return T.concatenate({ T.relu(x), T.relu(-x) }, o.axis or 1) end,
  double_backward = true,
  cases = { { name = 'axis1', opts = { axis = 1 } }, { name = 'axis-1', opts = { axis = -1 } }, { name = 'axis0', opts = { axis = 0 } } },
})
function_spec.describe('F.maxout', {
  fn = function(x, o) return F.maxout(x, o.pool, { axis = o.axis }) end,
  inputs = function(dt) return { U(-1, 1, { 3, 6, 2 }, dt) } end,
  reference = function(x, o)
    if o.axis == 1 then return T.max(x:reshape({ 3, 6 / o.pool, o.pool, 2 }), { axis = 2 }) end
    return T.max(x:reshape({ 3, 6, 1, 2 }), { axis = 3 })
  end,
  double_backward = true,
  cases = { { name = 'pool3', opts = { pool = 3, axis = 1 } }, { name = 'pool2', opts = { pool = 2, axis = 1 } },
    { name = 'last axis', opts = { pool = 2, axis = 2 } } },
})

describe('prelu family', function()
  it('rrelu samples r in [l, u) in training and uses (l+u)/2 in test mode', function()
    local x = T.full({ 1000 }, -1, 'float64')
    local y, r = F.rrelu(x, { return_r = true })
    local rt = r:totable()
    for i = 1, #rt do assert.is_true(rt[i] >= 1 / 8 and rt[i] < 1 / 3) end
    assert.is_true(T.max(T.abs(y.array + r)):item() == 0)
    chainer.using_config('train', false, function()
      local yt = F.rrelu(x, { l = 0.1, u = 0.3 }).array
      assert.is_true(T.max(T.abs(yt + 0.2)):item() < 1e-15)
    end)
    assert.are.same({ 2, 3 }, F.rrelu(T.array({ 2, 3 }, 'float64')).array:totable())
  end)
  it('maxout reads pool_size from Chainer keyword options', function()
    local x = T.array({ { 1, 5, 2, 0 } }, 'float64')
    assert.are.same({ { 5, 2 } }, F.maxout(x, { pool_size = 2 }).array:totable())
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.prelu(T.zeros({ 2, 3 }), T.zeros({ 4 })) end,
      'prelu: W has shape %(4,%), which must equal x.shape%[1:2%]')
    assert.error_matches(function() F.maxout(T.zeros({ 2, 5 }), 2) end,
      'maxout: the size of axis 1 %(5%) is not a multiple of pool_size %(2%)')
    assert.error_matches(function() F.rrelu(T.zeros({ 2 }), { r = T.zeros({ 3 }) }) end, 'rrelu: r has shape %(3,%)')
    assert.error_matches(function() F.crelu(T.zeros({ 2 }), { axis = 1 }) end, 'crelu: axis 1 is out of range')
  end)
end)

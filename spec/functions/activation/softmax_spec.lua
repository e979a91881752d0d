-- F.softmax and F.log_softmax (fused C kernels) along any axis
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

local function ref_softmax(x, axis)
  local m = T.max(x, { axis = axis, keepdims = true })
  local e = T.exp(x - m)
  return e / T.sum(e, { axis = axis, keepdims = true })
end
local function ref_log_softmax(x, axis)
  return x - T.logsumexp(x, { axis = axis, keepdims = true })
end

local cases = {
  { name = 'axis1', opts = { axis = 1 } }, { name = 'axis0', opts = { axis = 0 } },
  { name = 'axis2', opts = { axis = 2 } }, { name = 'axis-1', opts = { axis = -1 } },
}
local function x234(dt) return { U(-2, 2, { 2, 3, 4 }, dt) } end

function_spec.describe('F.softmax', {
  fn = function(x, o) return F.softmax(x, o) end, inputs = x234,
  reference = function(x, o) return ref_softmax(x, o.axis) end, double_backward = true, cases = cases,
})
function_spec.describe('F.log_softmax', {
  fn = function(x, o) return F.log_softmax(x, o) end, inputs = x234,
  reference = function(x, o) return ref_log_softmax(x, o.axis) end, double_backward = true, cases = cases,
})
-- a wide inner extent crosses the kernel's 256-column tiles
function_spec.describe('F.softmax (wide axis-0)', {
  fn = function(x) return F.softmax(x, { axis = 0 }) end,
  inputs = function(dt) return { U(-2, 2, { 3, 300 }, dt) } end,
  reference = function(x) return ref_softmax(x, 0) end, backward = false,
})

describe('softmax', function()
  it('matches hand-computed values and defaults to axis 1', function()
    local x = T.array({ { 1, 2, 3 }, { 0, 0, 0 } }, 'float64')
    local y = F.softmax(x).array:totable()
    local e = { math.exp(1), math.exp(2), math.exp(3) }
    local s = e[1] + e[2] + e[3]
    for j = 1, 3 do
      assert.is_true(math.abs(y[1][j] - e[j] / s) < 1e-15)
      assert.is_true(math.abs(y[2][j] - 1 / 3) < 1e-15)
    end
    local ly = F.log_softmax(x).array:totable()
    assert.is_true(math.abs(ly[1][3] - (3 - math.log(s))) < 1e-14)
  end)
  it('is stable for huge inputs', function()
    local x = T.array({ { 1000, 1001 }, { -1000, -1001 } }, 'float32')
    local y = F.softmax(x).array:totable()
    assert.is_true(math.abs(y[1][2] - 1 / (1 + math.exp(-1))) < 1e-6)
    local ly = F.log_softmax(x).array:totable()
    assert.is_true(math.abs(ly[1][1] - (-math.log(1 + math.exp(1)))) < 1e-6)
    local lz = F.log_softmax(x, { axis = 0 }).array:totable()
    assert.is_true(math.abs(lz[2][1] + 2000) < 1e-3)
    assert.is_true(ly[2][2] == ly[2][2])
  end)
  it('works on non-contiguous inputs, size-1 axes, empty batches and float16', function()
    local x = T.random.uniform(-1, 1, { 4, 3 }, 'float64')
    local xt = x:transpose()
    local y = F.softmax(xt, { axis = 0 }).array
    local want = ref_softmax(xt:copy(), 0)
    assert.is_true(T.max(T.abs(y - want)):item() < 1e-15)
    assert.are.same({ { 1 }, { 1 } }, F.softmax(T.zeros({ 2, 1 }, 'float64')).array:totable())
    assert.are.same({ 0, 3 }, F.softmax(T.zeros({ 0, 3 })).shape)
    local h = F.softmax(T.zeros({ 2, 4 }, 'float16')).array
    assert.are.equal('float16', h.dtype)
    assert.is_true(math.abs(h:astype('float32'):totable()[1][1] - 0.25) < 1e-3)
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.softmax(T.zeros({ 2, 3 }), { axis = 2 }) end, 'softmax: axis 2 is out of range')
    assert.error_matches(function() F.log_softmax(T.zeros({})) end, 'log_softmax: x must have at least one axis')
    assert.error_matches(function() F.softmax(T.zeros({ 2 }, 'int32')) end, 'softmax: x must be a float tensor')
  end)
end)

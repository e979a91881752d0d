-- F.expand_dims, F.squeeze, F.flatten, F.swapaxes, F.moveaxis, F.rollaxis
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

local function x324(dt) return { U(-1, 1, { 3, 2, 4 }, dt) } end

function_spec.describe('F.expand_dims', {
  fn = function(x, o) return F.expand_dims(x, o.axis) end, inputs = x324,
  reference = function(x, o) return x:expand_dims(o.axis) end, double_backward = true,
  cases = { { name = 'a0', opts = { axis = 0 } }, { name = 'a3', opts = { axis = 3 } }, { name = 'a-1', opts = { axis = -1 } } },
})
function_spec.describe('F.squeeze', {
  fn = function(x, o) return F.squeeze(x, o.axis) end,
  inputs = function(dt) return { U(-1, 1, { 3, 1, 4, 1 }, dt) } end,
  reference = function(x, o) return x:squeeze(o.axis) end, double_backward = true,
  cases = { { name = 'all', opts = {} }, { name = 'a1', opts = { axis = 1 } }, { name = 'both', opts = { axis = { 1, -1 } } } },
})
function_spec.describe('F.flatten', {
  fn = function(x) return F.flatten(x) end, inputs = x324,
  reference = function(x) return x:reshape(-1) end, double_backward = true,
})
function_spec.describe('F.swapaxes', {
  fn = function(x) return F.swapaxes(x, 0, 2) end, inputs = x324,
  reference = function(x) return x:swapaxes(0, 2) end, double_backward = true,
})
function_spec.describe('F.moveaxis', {
  fn = function(x, o) return F.moveaxis(x, o.s, o.d) end, inputs = x324,
  reference = function(x, o) return x:moveaxis(o.s, o.d) end, double_backward = true,
  cases = { { name = '0to2', opts = { s = 0, d = 2 } }, { name = '-1to0', opts = { s = -1, d = 0 } } },
})
function_spec.describe('F.rollaxis', {
  fn = function(x, o) return F.rollaxis(x, o.a, o.s) end, inputs = x324,
  reference = function(x, o) return x:rollaxis(o.a, o.s) end, double_backward = true,
  cases = { { name = 'a2', opts = { a = 2 } }, { name = 'a0s3', opts = { a = 0, s = 3 } }, { name = 'a1s0', opts = { a = 1, s = 0 } } },
})

describe('array axes functions', function()
  local x = T.zeros({ 2, 3, 4 })
  it('give known shapes', function()
    assert.are.same({ 2, 1, 3, 4 }, F.expand_dims(x, { axis = 1 }).shape)
    assert.are.same({ 4, 3, 2 }, F.swapaxes(x, { axis1 = 0, axis2 = 2 }).shape)
    assert.are.same({ 3, 4, 2 }, F.moveaxis(x, { source = 0, destination = 2 }).shape)
    assert.are.same({ 4, 2, 3 }, F.moveaxis(x, { 1, 2 }, { 2, 0 }).shape)
    assert.are.same({ 4, 2, 3 }, F.rollaxis(x, { axis = 2 }).shape)
    assert.are.same({ 24 }, F.flatten(x).shape)
    assert.are.same({}, F.squeeze(T.zeros({ 1, 1 })).shape)
    assert.are.same({ 1 }, F.expand_dims(T.zeros({}), 0).shape)
  end)
  it('rejects bad axes', function()
    assert.error_matches(function() F.squeeze(x, 1) end, 'squeeze: cannot squeeze axis 1 of size 3')
    assert.error_matches(function() F.expand_dims(x, 4) end, 'expand_dims: axis 4 is out of range')
    assert.error_matches(function() F.swapaxes(x, 0, 3) end, 'swapaxes: axis2 3 is out of range')
    assert.error_matches(function() F.moveaxis(x, { 0, 0 }, { 1, 2 }) end, 'moveaxis: repeated axis')
    assert.error_matches(function() F.expand_dims(x, { axes = 1 }) end, "expand_dims: unknown option 'axes'")
  end)
end)

-- Specs for chainer.Parameter.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

local helpers = require 'helpers'
local vals = helpers.vals

-- a minimal initializer: callable, fills in place
local Fill = chainer.Object:extend('Fill')
function Fill:init(v, dtype) self.v, self.dtype = v, dtype end
Fill.__call = function(self, a) a:fill_(self.v) end

describe('Parameter', function()
  it('is a Variable made from an initializer and a shape', function()
    local p = chainer.Parameter(Fill(0.5), { 2, 3 })
    assert.is_true(chainer.isinstance(p, chainer.Variable))
    assert.are.same({ 2, 3 }, p.shape)
    assert.are.same({ 0.5, 0.5, 0.5, 0.5, 0.5, 0.5 }, vals(p))
    assert.are.equal('float32', p.dtype)
    assert.are.equal('float64', chainer.Parameter(Fill(1, 'float64'), { 2 }).dtype)
    assert.is_false(p.update_rule)
    p.update_rule = 'slot'
    assert.are.equal('slot', p.update_rule)
  end)

  it('accepts a constant, a tensor or nothing (NaN)', function()
    assert.are.same({ 0, 0 }, vals(chainer.Parameter(0, { 2 })))
    local t = T.array({ 1, 2 })
    assert.is_true(chainer.Parameter(t).array == t)
    local n = vals(chainer.Parameter(nil, { 1 }))
    assert.is_true(n[1] ~= n[1])
  end)

  it('initialises lazily when the shape is known later', function()
    local p = chainer.Parameter(Fill(2))
    assert.is_nil(p.array)
    assert.is_false(p.is_initialized)
    p:zerograd()                         -- remembered until initialisation
    p:initialize({ 3 })
    assert.is_true(p.is_initialized)
    assert.are.same({ 2, 2, 2 }, vals(p))
    assert.are.same({ 0, 0, 0 }, vals(p.grad))
    local q = chainer.Parameter(Fill(1))
    q:copydata(chainer.Variable(T.array({ 4, 5 })))
    assert.are.same({ 4, 5 }, vals(q))
    assert.truthy(tostring(chainer.Parameter(Fill(1), { name = 'W' })):find('parameter W(uninitialized)', 1, true))
  end)

  it('an uninitialised parameter cannot be used', function()
    local p = chainer.Parameter(Fill(1))
    local ok, e = pcall(function() return p * 2 end)
    assert.is_false(ok)
    assert.truthy(tostring(e):find('uninitialised Parameter', 1, true))
  end)

  it('takes part in graphs and accumulates gradients', function()
    local W = chainer.Parameter(Fill(3), { 2 })
    local x = chainer.Variable(T.array({ 1, 2 }))
    F.sum(W * x):backward()
    F.sum(W * x):backward()
    assert.are.same({ 2, 4 }, vals(W.grad))
    assert.truthy(tostring(W):find('^parameter%('))
  end)
end)

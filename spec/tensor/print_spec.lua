-- print(t): NumPy's array repr.  Fixed-point floats line up on the decimal
-- point (integer parts padded on the left, fractions on the right), as
-- numpy.array_repr prints them; the expected strings are NumPy's output
-- with "array(" replaced by "tensor(".
local T = require 'chainer.tensor'

local function shown(values, dtype)
  return tostring(T.array(values, dtype or 'float64')):gsub(', dtype=float64%)$', ')')
end

describe('tensor printing', function()
  it('pads short fractions on the right so the points line up', function()
    assert.are.equal('tensor([[0.8417, 0.6288],\n        [0.6457, 0.355 ]])',
      shown({ { 0.8417, 0.6288 }, { 0.6457, 0.355 } }))
    assert.are.equal('tensor([[0.5, 1. ],\n        [2. , 3.5]])', shown({ { 0.5, 1 }, { 2, 3.5 } }))
  end)

  it('pads integer parts (and the sign) on the left', function()
    assert.are.equal('tensor([ -1.25, 100.5 ])', shown({ -1.25, 100.5 }))
    assert.are.equal('tensor([-0.0905, -0.9238,  0.1254])', shown({ -0.0905, -0.9238, 0.1254 }))
  end)

  it('right-justifies nan and inf to the common width', function()
    assert.are.equal('tensor([ 1.5 , 10.25,   nan,  -inf])', shown({ 1.5, 10.25, 0 / 0, -1 / 0 }))
  end)

  it('keeps integral floats, exponents and integers as NumPy does', function()
    assert.are.equal('tensor([1., 2., 3.])', shown({ 1, 2, 3 }))
    assert.are.equal('tensor([1.0000e-05, 1.0000e+00])', shown({ 1e-5, 1 }))
    assert.are.equal('tensor([  1, -20, 300], dtype=int32)', tostring(T.array({ 1, -20, 300 }, 'int32')))
    assert.are.equal('tensor(2.5)', shown(2.5))
  end)
end)

local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions

describe('F.binary_accuracy', function()
  it('y >= 0 is positive; -1 labels are ignored', function()
    local y = T.array({ { 1, -1, 0 }, { -2, 3, -0.5 } }, 'float64')
    local t = T.array({ { 1, 0, 0 }, { 0, -1, -1 } }, 'int32')
    local a = F.binary_accuracy(y, t)
    assert.are.equal('float64', a.dtype)
    assert.are.same({}, a.shape)
    assert.is_true(math.abs(a.array:item() - 3 / 4) < 1e-15)
    assert.are.equal(0, F.binary_accuracy(T.zeros({ 2 }, 'float32'), T.array({ -1, -1 }, 'int32')).array:item())
  end)
  it('rejects bad labels', function()
    local ok, e = pcall(F.binary_accuracy, T.zeros({ 2 }, 'float32'), T.zeros({ 3 }, 'int32'))
    assert.is_truthy(tostring(e):find('binary_accuracy: y and t must have the same shape', 1, true))
    ok, e = pcall(F.binary_accuracy, T.zeros({ 2 }, 'float32'), T.zeros({ 2 }, 'float32'))
    assert.is_truthy(tostring(e):find('binary_accuracy: t must be an integer tensor', 1, true))
  end)
end)

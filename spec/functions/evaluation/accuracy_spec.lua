local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions

local function err(pat, ...)
  local ok, e = pcall(F.accuracy, ...)
  assert.is_false(ok)
  assert.is_truthy(tostring(e):find(pat, 1, true), tostring(e))
end

describe('F.accuracy', function()
  local y = T.array({ { 0.1, 0.9, 0 }, { 0.8, 0.1, 0.1 }, { 0.2, 0.2, 0.6 }, { 0.9, 0, 0.1 } }, 'float32')
  it('counts argmax hits, 0-d of y dtype, no gradient', function()
    local a = F.accuracy(y, T.array({ 1, 1, 2, 0 }, 'int32'))
    assert.are.same({}, a.shape)
    assert.are.equal('float32', a.dtype)
    assert.are.equal(0.75, a.array:item())
    assert.is_false(a.requires_grad)
  end)
  it('ignore_label leaves positions out; all ignored gives 0', function()
    local t = T.array({ 1, -1, 2, -1 }, 'int32')
    assert.are.equal(1, F.accuracy(y, t, { ignore_label = -1 }).array:item())
    assert.are.equal(0.5, F.accuracy(y, t).array:item())
    assert.are.equal(0, F.accuracy(y, T.array({ -1, -1, -1, -1 }, 'int32'), { ignore_label = -1 }).array:item())
  end)
  it('spatial inputs and Variables', function()
    local ys = T.zeros({ 2, 3, 2 }, 'float64')
    ys:slice(0, 2, 0):fill_(1)   -- position (0, *, 0) predicts 2
    local t = T.array({ { 2, 0 }, { 0, 1 } }, 'int64')
    assert.are.equal(0.75, F.accuracy(chainer.Variable(ys), t).array:item())
  end)
  it('rejects bad labels', function()
    err('accuracy: t must be an integer tensor', y, T.array({ 1, 1, 2, 0 }, 'float32'))
    err('does not fit y of shape (4, 3)', y, T.array({ 1, 1, 2 }, 'int32'))
    err('y must be a float tensor', T.zeros({ 2, 2 }, 'int32'), T.array({ 1, 1 }, 'int32'))
  end)
end)

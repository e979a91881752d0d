local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local testing = require 'chainer.testing'

describe('F.classification_summary', function()
  -- predictions: 1, 0, 2, 0, 1 ; labels: 1, 1, 2, -1, 0
  local y = T.array({ { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, 1 }, { 1, 0, 0 }, { 0, 1, 0 } }, 'float32')
  local t = T.array({ 1, 1, 2, -1, 0 }, 'int32')
  it('precision, recall, F-beta and support per class', function()
    local p, r, f, s = F.classification_summary(y, t)
    testing.assert_allclose(p.array, T.array({ 0, 0.5, 1 }, 'float32'))
    testing.assert_allclose(r.array, T.array({ 0, 0.5, 1 }, 'float32'))
    assert.are.same({ 1, 2, 1 }, s.array:totable())
    assert.are.equal('int64', s.dtype)
    local ft = f.array:totable()
    assert.is_true(ft[1] ~= ft[1])  -- 0/0 is NaN, as in Chainer
    assert.is_true(math.abs(ft[2] - 0.5) < 1e-6)
    local _, _, f2 = F.classification_summary(y, t, { beta = 2, label_num = 4 })
    assert.are.same({ 4 }, f2.shape)
  end)
  it('precision/recall/fbeta_score/f1_score', function()
    local p, s = F.precision(y, t)
    testing.assert_allclose(p.array, T.array({ 0, 0.5, 1 }, 'float32'))
    assert.are.same({ 1, 2, 1 }, s.array:totable())
    local r = F.recall(y, t, { label_num = 3 })
    testing.assert_allclose(r.array, T.array({ 0, 0.5, 1 }, 'float32'))
    local f1 = F.f1_score(y, t)
    assert.is_true(math.abs(f1.array:totable()[3] - 1) < 1e-6)
    assert.is_not_nil(F.fbeta_score(y, t, { beta = 0.5 }))
  end)
  it('rejects bad labels', function()
    local ok, e = pcall(F.classification_summary, y, t, { label_num = 2 })
    assert.is_truthy(tostring(e):find('classification_summary: label t[2] (flat position) is 2, out of range', 1, true))
    ok, e = pcall(F.classification_summary, y, t:astype('float32'))
    assert.is_truthy(tostring(e):find('t must be an integer tensor', 1, true))
  end)
end)

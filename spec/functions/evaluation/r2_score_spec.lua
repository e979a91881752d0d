local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local testing = require 'chainer.testing'

describe('F.r2_score', function()
  it('matches 1 - SS_res / SS_tot; constant columns give 0', function()
    local truth = T.array({ { 1, 5 }, { 2, 5 }, { 3, 5 } }, 'float64')
    local pred = T.array({ { 1.5, 4 }, { 2, 5 }, { 2, 6 } }, 'float64')
    local raw = F.r2_score(pred, truth, { multioutput = 'raw_values' })
    testing.assert_allclose(raw.array, T.array({ 1 - 1.25 / 2, 0 }, 'float64'), { atol = 1e-15 })
    local avg = F.r2_score(pred, truth)
    assert.are.same({}, avg.shape)
    assert.is_true(math.abs(avg.array:item() - (1 - 1.25 / 2) / 2) < 1e-15)
    assert.are.equal('float32', F.r2_score(pred:astype('float32'), truth:astype('float32')).dtype)
  end)
  it('rejects bad arguments', function()
    local a = T.zeros({ 3 }, 'float32')
    local ok, e = pcall(F.r2_score, a, T.zeros({ 2 }, 'float32'))
    assert.is_truthy(tostring(e):find('r2_score: pred and true must have the same shape', 1, true))
    ok, e = pcall(F.r2_score, a, a, { sample_weight = a })
    assert.is_truthy(tostring(e):find('sample_weight is not supported', 1, true))
    ok, e = pcall(F.r2_score, a, a, { multioutput = 'variance_weighted' })
    assert.is_truthy(tostring(e):find("multioutput must be 'uniform_average' or 'raw_values'", 1, true))
  end)
end)

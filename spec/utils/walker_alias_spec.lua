local chainer = require 'chainer'
local T = chainer.tensor
local WalkerAlias = require 'chainer.utils.walker_alias'

describe('chainer.utils.WalkerAlias', function()
  it('samples with the given frequencies, reproducibly', function()
    T.random.seed(1)
    local wa = WalkerAlias({ 1, 2, 3, 4, 0 })
    local s = wa:sample({ 200, 500 })
    assert.are.equal('int32', s.dtype)
    assert.are.same({ 200, 500 }, s.shape)
    local c = { 0, 0, 0, 0, 0 }
    for _, v in ipairs(s:reshape(-1):totable()) do c[v + 1] = c[v + 1] + 1 end
    for i = 1, 4 do assert.is_true(math.abs(c[i] / 1e5 - i / 10) < 0.005, 'class ' .. (i - 1)) end
    assert.are.equal(0, c[5])
    T.random.seed(1)
    assert.are.same(s:totable(), wa:sample({ 200, 500 }):totable())
  end)
  it('accepts tensors, a single class and a number shape', function()
    local wa = WalkerAlias(T.array({ 0.0, 5.0 }, 'float32'))
    assert.are.same({ 1, 1, 1 }, wa:sample(3):totable())
    assert.are.same({ 0, 0 }, WalkerAlias({ 7 }):sample({ 2 }):totable())
    assert.are.equal(WalkerAlias, chainer.utils.WalkerAlias)
  end)
  it('rejects bad probabilities', function()
    local ok, e = pcall(WalkerAlias, { 1, -1 })
    assert.is_truthy(tostring(e):find('WalkerAlias: probs[1] must be a finite non-negative number', 1, true))
    ok, e = pcall(WalkerAlias, { 0, 0 })
    assert.is_truthy(tostring(e):find('must not sum to zero', 1, true))
    ok, e = pcall(WalkerAlias, {})
    assert.is_truthy(tostring(e):find('must not be empty', 1, true))
  end)
end)

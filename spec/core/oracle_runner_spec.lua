-- testing/oracle.lua, the runner of the real-Chainer reference vectors:
-- the forms of vectors-v2 it must read (link programs with parameters at
-- nested paths, several inputs, keyword arguments, lambdas).
local oracle = require 'chainer.testing.oracle'

local function find(name)
  for _, root in ipairs({ '../shared/oracle/', '/work/shared/oracle/' }) do
    local f = io.open(root .. name .. '/index.json', 'rb')
    if f then f:close() return root .. name end
  end
end
local v2 = find('vectors-v2')

describe('oracle runner', function()
  if not v2 then
    pending('../shared/oracle/vectors-v2 not found')
    return
  end

  it('runs every link case of vectors-v2 (those whose link exists) without a failure', function()
    local s = oracle.run(v2, { filter = 'L.' })
    assert.are.same({}, s.failures)
    assert.are.equal(0, s.cases.failed)
    assert.are.equal(0, s.cases.not_implemented)
    assert.are.equal(116, s.cases.passed)
  end)

  it('reads the lambda given to F.negative_sampling as its sampler', function()
    local s = oracle.run(v2, { filter = 'negative_sampling/' })
    assert.are.same({}, s.failures)
    assert.are.equal(4, s.cases.passed)
  end)

  it('checks the gradients of hinge and average_pooling_1d (pad_value=None) in vectors-v2', function()
    for _, name in ipairs({ 'hinge/L1/', 'average_pooling_1d/k3_s2_p1_padNone/' }) do
      local s = oracle.run(v2, { filter = name })
      assert.are.same({}, s.failures)
      assert.are.equal(2, s.cases.passed)
    end
  end)
end)

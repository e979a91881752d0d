-- Links that cannot be built without a size say which argument is missing
-- (before, a missing out_size or ksize failed inside arithmetic on nil).
local chainer = require 'chainer'
local L = chainer.links

describe('links: a missing or bad size argument', function()
  local cases = {
    { 'ChildSumTreeLSTM', {}, 'L.ChildSumTreeLSTM: out_size must be a positive integer %(got nil%)' },
    { 'ChildSumTreeLSTM', { 3, 0 }, 'L.ChildSumTreeLSTM: out_size must be a positive integer %(got 0%)' },
    { 'NaryTreeLSTM', {}, 'L.NaryTreeLSTM: out_size must be a positive integer %(got nil%)' },
    { 'NaryTreeLSTM', { 3, 4, 1.5 }, 'L.NaryTreeLSTM: n_ary must be a positive integer %(got 1.5%)' },
    { 'DeformableConvolution2D', { 3, 4 },
      'L.DeformableConvolution2D: ksize must be a positive integer or a table of 2 %(got nil%)' },
    { 'DeformableConvolution2DSampler', { 3, 4, { 3 } },
      'L.DeformableConvolution2DSampler: ksize must be a positive integer or a table of 2 %(got a table of 1%)' },
    { 'StatefulZoneoutLSTM', { 3 }, 'L.StatefulZoneoutLSTM: out_size must be a positive integer %(got nil%)' },
    { 'DecorrelatedBatchNormalization', { 8, 0 },
      'L.DecorrelatedBatchNormalization: groups must be a positive integer %(got 0%)' },
  }
  for _, c in ipairs(cases) do
    it(c[1] .. '(' .. #c[2] .. ' arguments)', function()
      local ok, err = pcall(L[c[1]], unpack(c[2]))
      assert.is_false(ok)
      assert.matches('^' .. c[3] .. '$', err)
    end)
  end

  it('still builds with the sizes given', function()
    assert.are.equal(4, L.ChildSumTreeLSTM(3, 4).state_size)
    assert.are.equal(3, L.NaryTreeLSTM(3, 4, 3).n_ary)
    assert.are.same({ 3, 3 }, L.DeformableConvolution2DSampler(3, 4, 3).ksize)
    assert.are.same({ 2, 3 }, L.DeformableConvolution2DSampler(3, 4, { 2, 3 }).ksize)
  end)
end)

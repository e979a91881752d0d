-- chainer.testing's smaller helpers: save_and_load round trips,
-- get_trainer_with_mock_updater, pytest-style parameterization.
local chainer = require 'chainer'
local T = chainer.tensor
local testing = require 'chainer.testing'
local fs = require 'chainer._fs'

describe('save_and_load', function()
  for _, fmt in ipairs({ 'npz', 'hdf5' }) do
    it('save_and_load_' .. fmt .. ' copies a link into another', function()
      local src, dst = chainer.links.Linear(3, 2), chainer.links.Linear(3, 2)
      testing['save_and_load_' .. fmt](src, dst)
      assert.are.equal(0, (src.W.array - dst.W.array):abs():max():item())
      assert.are.equal(0, (src.b.array - dst.b.array):abs():max():item())
    end)
  end

  it('calls saver then loader on one path in a temporary directory it removes', function()
    local seen = {}
    testing.save_and_load('a', 'b', 'x.txt',
      function(path, obj) seen[#seen + 1] = { 'save', path, obj } require('helpers').write_file(path, obj) end,
      function(path, obj) seen[#seen + 1] = { 'load', path, obj, fs.read_file(path) } end)
    assert.are.equal(2, #seen)
    assert.are.equal(seen[1][2], seen[2][2])
    assert.truthy(seen[1][2]:match('/x%.txt$'))
    assert.are.same({ 'save', 'a' }, { seen[1][1], seen[1][3] })
    assert.are.same({ 'load', 'b', 'a' }, { seen[2][1], seen[2][3], seen[2][4] })
    assert.is_false(fs.exists(seen[1][2]))
    assert.has_error(function() testing.save_and_load(1, 2, 'a/b', print, print) end)
  end)
end)

describe('get_trainer_with_mock_updater', function()
  it('counts iterations and epochs as Chainer mock updater does', function()
    local calls = {}
    local trainer = testing.get_trainer_with_mock_updater({ 3, 'epoch' }, 2)
    trainer:extend(function(tr)
      calls[#calls + 1] = { tr.updater.iteration, tr.updater.epoch, tr.updater.epoch_detail, tr.updater.is_new_epoch }
    end, { trigger = { 1, 'epoch' } })
    trainer.out = require('helpers').tmpdir()
    trainer:run()
    assert.are.same({ { 2, 1, 1, true }, { 4, 2, 2, true }, { 6, 3, 3, true } }, calls)
    assert.are.equal(6, trainer.updater.iteration)
    trainer.updater.iteration = 3
    assert.are.equal(1, trainer.updater.previous_epoch_detail)   -- (3 - 1) / 2
    assert.is_false(trainer.updater.is_new_epoch)
    require('helpers').rmdir(trainer.out)
  end)
end)

describe('from_pytest_parameterize', function()
  it('turns names and rows into tables', function()
    assert.are.same({ { a = 1, b = 'x' }, { a = 2, b = 'y' } },
      testing.from_pytest_parameterize('a,b', { { 1, 'x' }, { 2, 'y' } }))
    assert.are.same({ { n = 3 }, { n = 4 } }, testing.from_pytest_parameterize('n', { 3, 4 }))
  end)
end)

local rows = {}
testing.parameterize_pytest('x,y', { { 1, 2 }, { 3, 4 } })('parameterize_pytest', function(p)
  it('registers each row', function() rows[#rows + 1] = p.x + p.y end)
end)
describe('parameterize_pytest', function()
  it('ran both rows', function() assert.are.same({ 3, 7 }, rows) end)
end)

-- A trainer snapshot with exactly the keys Chainer 7.8.1's train_mnist.py
-- writes loads strictly into train_mnist.lua's trainer: the state chainlua
-- keeps beyond Chainer's (the order sampler's seed and offset, PlotReport's
-- trigger) is optional by design, and every key Chainer itself requires is
-- still reported when absent.
local chainer = require 'chainer'
local F, L, T = chainer.functions, chainer.links, chainer.tensor
local training = require 'chainer.training'
local E = require 'chainer.training.extensions'
local CS = require 'training.chainer_snapshot'
local H = require 'training.helpers'

local N_IN, UNITS, N_TRAIN, BATCH = 7, 5, 40, 10

local MLP = chainer.Chain:extend('SnapMLP')
function MLP:init(u, o) self.l1 = L.Linear(nil, u) self.l2 = L.Linear(nil, u) self.l3 = L.Linear(nil, o) end
function MLP:forward(x) return self.l3(F.relu(self.l2(F.relu(self.l1(x))))) end

-- train_mnist.lua's trainer on a small problem (same extensions, same order)
local function mnist_trainer(out, epochs, without_plots)
  local model = L.Classifier(MLP(UNITS, 10))
  local opt = chainer.optimizers.Adam():setup(model)
  local x = T.random.uniform(0, 1, { N_TRAIN, N_IN }, 'float32')
  local labels = {}
  for i = 1, N_TRAIN do labels[i] = (i - 1) % 10 end
  local ds = chainer.datasets.TupleDataset(x, T.array(labels, 'int32'))
  local train_iter = chainer.iterators.SerialIterator(ds, BATCH)
  local test_iter = chainer.iterators.SerialIterator(ds, BATCH, { loop = false, shuffle = false })
  local updater = training.StandardUpdater(train_iter, opt)
  local trainer = training.Trainer(updater, { epochs, 'epoch' }, { out = out })
  trainer:extend(E.Evaluator(test_iter, model))
  trainer:extend(E.DumpGraph('main/loss'))
  trainer:extend(E.snapshot({ n_retains = 1 }), { trigger = { epochs, 'epoch' } })
  trainer:extend(E.LogReport())
  if not without_plots then
    trainer:extend(E.PlotReport({ 'main/loss', 'validation/main/loss' }, { x_key = 'epoch', filename = 'loss.png' }))
    trainer:extend(E.PlotReport({ 'main/accuracy', 'validation/main/accuracy' },
      { x_key = 'epoch', filename = 'accuracy.png' }))
  end
  trainer:extend(E.PrintReport({ 'epoch', 'main/loss' }, { out = { write = function() end } }))
  trainer:extend(E.ProgressBar({ out = { write = function() end, flush = function() end } }))
  return trainer, model
end

local LOG = { { ['main/loss'] = 0.75, ['validation/main/loss'] = 0.5, epoch = 1, iteration = 4,
  elapsed_time = 12.5 } }

local function chainer_snapshot(dir)
  local keys, params = CS.train_mnist_snapshot({ n_in = N_IN, units = UNITS, n_out = 10, n_train = N_TRAIN,
    iteration = N_TRAIN / BATCH, epoch = 1, log = LOG,
    plots = { ['loss.png'] = { ['main/loss'] = { { 1, 0.75 } } } } })
  return keys, params
end

describe("a snapshot with Chainer's train_mnist.py key set", function()
  local dir
  before_each(function() dir = H.tmpdir() end)
  after_each(function() H.rmdir(dir) end)

  it('loads strictly and training continues from it', function()
    local keys, params = chainer_snapshot(dir)
    local path = dir .. '/snapshot_iter_4'
    T.savez(path, keys)
    local trainer, model = mnist_trainer(dir, 2)
    chainer.serializers.load_npz(path, trainer)   -- strict (the default)
    local up = trainer.updater
    assert.equal(4, up.iteration)
    assert.equal(1, up:get_iterator('main').epoch)
    assert.equal(0, (model.predictor.l2.W.array - params['predictor/l2/W']):abs():max():item())
    local m = up:get_optimizer('main').target.predictor.l1.W.update_rule.state.m
    assert.equal(0, (m - keys['updater/optimizer:main/predictor/l1/W/m']):abs():max():item())
    assert.equal(0.75, trainer:get_extension('LogReport').log[1]['main/loss'])
    -- the order Chainer saved is the one the iterator continues with
    assert.same(keys['updater/iterator:main/order']:totable(), up:get_iterator('main')._state.order:totable())
    trainer:run()
    assert.equal(8, up.iteration)
    local log = trainer:get_extension('LogReport').log
    assert.equal(2, #log)
    assert.equal(0.75, log[1]['main/loss'])
  end)

  it("reports every key Chainer requires that the file lacks", function()
    local keys = chainer_snapshot(dir)
    keys['updater/iterator:main/is_new_epoch'] = nil
    keys['extensions/PlotReport_1/_plot_accuracy.png'] = nil
    keys['updater/optimizer:main/predictor/l3/b/v'] = nil
    local path = dir .. '/snapshot_iter_4'
    T.savez(path, keys)
    local trainer = mnist_trainer(dir, 2)
    local ok, err = pcall(chainer.serializers.load_npz, path, trainer)
    assert.is_false(ok)
    assert.equal(string.format("load_npz: '%s' does not match the object (3 missing keys: " ..
      'extensions/PlotReport_1/_plot_accuracy.png, updater/iterator:main/is_new_epoch, ' ..
      'updater/optimizer:main/predictor/l3/b/v); pass {strict = false} to skip missing and extra keys', path), err)
  end)

  it('loads strictly into a trainer without some of its extensions (train_mnist --noplot), as in Chainer', function()
    local keys, params = chainer_snapshot(dir)
    local path = dir .. '/snapshot_iter_4'
    T.savez(path, keys)
    local trainer, model = mnist_trainer(dir, 2, true)
    chainer.serializers.load_npz(path, trainer)   -- the PlotReports' keys are left unread
    assert.equal(4, trainer.updater.iteration)
    assert.equal(0, (model.predictor.l2.W.array - params['predictor/l2/W']):abs():max():item())
    -- but an unexpected key elsewhere is still reported
    keys['updater/model:main/predictor/l4/W'] = T.zeros({ 2, 2 })
    T.savez(path, keys)
    local ok, err = pcall(chainer.serializers.load_npz, path, (mnist_trainer(dir, 2, true)))
    assert.is_false(ok)
    assert.truthy(err:find('1 unexpected key: updater/model:main/predictor/l4/W', 1, true), err)
  end)

  it('reports the keys of a registered extension that the snapshot lacks', function()
    local keys = chainer_snapshot(dir)
    local path = dir .. '/snapshot_iter_4'
    T.savez(path, keys)
    local trainer = mnist_trainer(dir, 2)
    trainer:extend(E.PlotReport({ 'main/loss' }, { x_key = 'epoch', filename = 'more.png' }))
    local ok, err = pcall(chainer.serializers.load_npz, path, trainer)
    assert.is_false(ok)
    assert.truthy(err:find('missing key', 1, true) and err:find('PlotReport_2', 1, true), err)
  end)

  it("chainlua's own snapshot keeps the extra state and Chainer's keys are a subset of it", function()
    local trainer = mnist_trainer(dir, 1)
    trainer:run()
    local s = chainer.serializers.DictionarySerializer()
    trainer:serialize(s)
    local ours = s.target
    for k in pairs(chainer_snapshot(dir)) do assert.is_not_nil(ours[k], k) end
    for _, k in ipairs({ 'updater/iterator:main/order_sampler/seed', 'updater/iterator:main/order_sampler/offset',
      'extensions/PlotReport/_trigger/previous_iteration' }) do
      assert.is_not_nil(ours[k], k)
    end
    -- and they are read back: the sampler continues where it was
    local sampler = trainer.updater:get_iterator('main').order_sampler
    local t2 = mnist_trainer(dir, 1)
    chainer.serializers.NpzDeserializer(ours):load(t2)
    local s2 = t2.updater:get_iterator('main').order_sampler
    assert.same({ sampler:get_state() }, { s2:get_state() })
  end)
end)

describe('an EarlyStoppingTrigger stop trigger', function()
  it("loads a Chainer snapshot strictly (Chainer 7.8.1's trigger saves nothing) and keeps its own state", function()
    local dir = H.tmpdir()
    local stop = function()
      return require('chainer.training.triggers').EarlyStoppingTrigger({ monitor = 'main/loss', patience = 2,
        max_trigger = { 3, 'epoch' } })
    end
    local keys = chainer_snapshot(dir)
    keys['stop_trigger/previous_iteration'] = nil   -- Chainer: no serialize method, no stop_trigger keys
    keys['stop_trigger/previous_epoch_detail'] = nil
    local path = dir .. '/snapshot_iter_4'
    T.savez(path, keys)
    local trainer = mnist_trainer(dir, 2)
    trainer.stop_trigger = stop()
    chainer.serializers.load_npz(path, trainer)
    assert.equal(4, trainer.updater.iteration)
    -- chainlua's own snapshot carries the trigger's state back
    trainer.stop_trigger.best, trainer.stop_trigger.count = 0.25, 1
    local s = chainer.serializers.DictionarySerializer()
    trainer:serialize(s)
    assert.equal(0.25, s.target['stop_trigger/best']:item())
    local t2 = mnist_trainer(dir, 2)
    t2.stop_trigger = stop()
    chainer.serializers.NpzDeserializer(s.target):load(t2)
    assert.equal(0.25, t2.stop_trigger.best)
    assert.equal(1, t2.stop_trigger.count)
    H.rmdir(dir)
  end)
end)

describe('the optional mark', function()
  it('an optional key may be absent; a required one is reported, also when asked after an optional miss', function()
    local d = chainer.serializers.NpzDeserializer({ a = T.array(1, 'int64') })
    local v, found = d:optional('b', 7)
    assert.equal(7, v)
    assert.is_false(found)
    v, found = d:optional('a', 0)
    assert.equal(1, v)
    assert.is_true(found)
    local obj = { serialize = function(_, s)
      s:optional('gone', 1)
      s:optional_child('sub')('x', 2)
      s('needed', 3)
    end }
    local ok, err = pcall(d.load, d, obj)
    assert.is_false(ok)
    assert.truthy(err:find('1 missing key: needed', 1, true), err)
    -- saving stores optional keys like any other
    local ser = chainer.serializers.DictionarySerializer()
    ser:save({ serialize = function(_, s) s:optional('k', 5) s:optional_child('c')('x', 6) end })
    assert.equal(5, ser.target.k:item())
    assert.equal(6, ser.target['c/x']:item())
  end)
end)

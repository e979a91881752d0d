-- A run stopped after epoch k and resumed from its snapshot ends with the
-- same parameters as an uninterrupted run (same seed).
local chainer = require 'chainer'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'
local H = require 'training.helpers'

local function setup(out, stop, autoload)
  local ds = H.problem(60, 0)
  local model = H.model(1)
  local iterators = require 'chainer.iterators'
  local optimizers = require 'chainer.optimizers'
  local it = iterators.SerialIterator(ds, 8)   -- 7.5 iterations per epoch: wrap-around batches
  local opt = optimizers.MomentumSGD({ lr = 0.05, momentum = 0.9 }):setup(model)
  local updater = training.StandardUpdater(it, opt)
  local trainer = training.Trainer(updater, stop, { out = out })
  trainer:extend(extensions.LogReport())
  trainer:extend(extensions.ExponentialShift('lr', 0.9), { trigger = { 1, 'epoch' } })
  trainer:extend(extensions.snapshot({ autoload = autoload }), { trigger = { 1, 'epoch' } })
  return trainer, model
end

local function params(model)
  local out = {}
  for name, p in model:namedparams() do out[name] = p.array:copy() end
  return out
end

describe('resume from a snapshot', function()
  it('continues to the same final parameters as an uninterrupted run', function()
    local dirA, dirB = H.tmpdir(), H.tmpdir()
    local ta, ma = setup(dirA, { 6, 'epoch' })
    ta:run()
    local pa = params(ma)

    local tb = setup(dirB, { 3, 'epoch' })
    tb:run()
    local it_at_3 = tb.updater.iteration
    assert.are.equal(23, it_at_3)                 -- first iteration with epoch_detail >= 3 (8 * 23 >= 180)
    local snap = dirB .. '/snapshot_iter_' .. it_at_3
    assert.is_not_nil(H.read(snap))

    -- a fresh process would rebuild everything, then load the snapshot
    local tc, mc = setup(dirB, { 6, 'epoch' })
    chainer.serializers.load_npz(snap, tc)
    assert.are.equal(it_at_3, tc.updater.iteration)
    tc:run()
    assert.are.equal(ta.updater.iteration, tc.updater.iteration)
    local pc = params(mc)
    for name, a in pairs(pa) do
      local c = pc[name]
      local diff = (a - c):abs():max():item()
      assert.is_true(diff <= 1e-6, name .. ' differs by ' .. diff)
    end
    -- the learning-rate schedule and the log continued too
    assert.are.equal(ta.updater:get_optimizer('main').lr, tc.updater:get_optimizer('main').lr)
    local la, lc = ta:get_extension('LogReport').log, tc:get_extension('LogReport').log
    assert.are.equal(#la, #lc)
    assert.are.equal(la[6]['main/loss'], lc[6]['main/loss'])
    assert.is_true(lc[6].elapsed_time >= lc[3].elapsed_time)
    H.rmdir(dirA) H.rmdir(dirB)
  end)

  it('autoload picks the newest snapshot in out', function()
    local dir = H.tmpdir()
    local t1 = setup(dir, { 2, 'epoch' })
    t1:run()
    local t2 = setup(dir, { 3, 'epoch' }, true)
    t2:run()
    -- resumed from iteration 15 (epoch 2), not from scratch
    assert.are.equal(23, t2.updater.iteration)
    assert.are.equal(3, #t2:get_extension('LogReport').log)
    H.rmdir(dir)
  end)

  it('writes the Chainer key layout', function()
    local dir = H.tmpdir()
    local t = setup(dir, { 1, 'epoch' })
    t:run()
    local s = chainer.serializers.DictionarySerializer()
    t:serialize(s)
    local want = {
      'updater/iterator:main/epoch', 'updater/iterator:main/current_position', 'updater/iteration',
      'updater/model:main/predictor/l1/W', 'updater/optimizer:main/t',
      'stop_trigger/previous_iteration', 'stop_trigger/previous_epoch_detail',
      'extensions/LogReport/_log', 'extension_triggers/_Snapshot/previous_iteration',
      '_snapshot_elapsed_time',
    }
    for _, k in ipairs(want) do assert.is_not_nil(s.target[k], k) end
    H.rmdir(dir)
  end)
end)

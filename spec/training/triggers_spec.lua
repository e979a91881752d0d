-- chainer.training.triggers
local training = require 'chainer.training'
local triggers = training.triggers
local H = require 'training.helpers'
local err_of = require('helpers').err_of

-- Runs `trig` for n iterations of a fake trainer; returns the iterations it fired at.
local function fires(trig, per_epoch, n, observe)
  local u = H.FakeUpdater(per_epoch)
  local tr = { updater = u, observation = {}, elapsed_time = 0 }
  local out = {}
  for i = 1, n do
    u.iteration = i
    tr.observation = observe and observe(i) or {}
    tr.elapsed_time = i
    if trig(tr) then out[#out + 1] = i end
  end
  return out
end

describe('IntervalTrigger', function()
  it('fires every period iterations', function()
    assert.are.same({ 3, 6, 9 }, fires(triggers.IntervalTrigger(3, 'iteration'), 4, 10))
  end)
  it('fires when epoch_detail crosses a multiple of the period', function()
    assert.are.same({ 4, 8 }, fires(triggers.IntervalTrigger(1, 'epoch'), 4, 9))
    -- 3 iterations per epoch, period 2 epochs: crossing 2.0 at iteration 6
    assert.are.same({ 6, 12 }, fires(triggers.IntervalTrigger(2, 'epoch'), 3, 13))
    -- fractional period, epoch of 10 iterations: every 5
    assert.are.same({ 5, 10, 15 }, fires(triggers.IntervalTrigger(0.5, 'epoch'), 10, 15))
    -- an epoch boundary between iterations (epoch = 2.5 iterations)
    local u = { iteration = 0 }
    local seq = { 0.4, 0.8, 1.2, 1.6, 2.0, 2.4 }
    local t = triggers.IntervalTrigger(1, 'epoch')
    local got = {}
    for i, e in ipairs(seq) do
      if t({ updater = { iteration = i, epoch_detail = e } }) then got[#got + 1] = i end
    end
    assert.are.same({ 3, 5 }, got)
  end)
  it('reports its training length and text, and validates', function()
    local t = triggers.IntervalTrigger(20, 'epoch')
    assert.are.same({ 20, 'epoch' }, { t:get_training_length() })
    assert.are.equal("IntervalTrigger(20, 'epoch')", tostring(t))
    assert.matches("unit must be 'epoch' or 'iteration'", err_of(function() triggers.IntervalTrigger(1, 'epochs') end))
    assert.has_error(function() triggers.IntervalTrigger(0, 'epoch') end)
  end)
end)

describe('get_trigger', function()
  it('turns tables into IntervalTriggers and passes callables through', function()
    local t = training.get_trigger({ 5, 'iteration' })
    assert.is_true(training.IntervalTrigger == getmetatable(t))
    local f = function() return true end
    assert.are.equal(f, training.get_trigger(f))
    local o = triggers.OnceTrigger()
    assert.are.equal(o, training.get_trigger(o))
    assert.is_false(training.get_trigger(nil)({}))
    assert.has_error(function() training.get_trigger('epoch') end)
  end)

  it("is training.util.get_trigger, Chainer's module path", function()
    local util = require('chainer').training.util
    assert.are.equal(util, require 'chainer.training.util')
    local t = util.get_trigger({ 2, 'epoch' })
    assert.is_true(training.IntervalTrigger == getmetatable(t))
    assert.are.equal(2, t.period)
    assert.are.equal('epoch', t.unit)
    assert.is_false(util.get_trigger(nil)({ updater = { iteration = 1 } }))
  end)
end)

describe('ManualScheduleTrigger', function()
  it('fires at the given points and then is finished', function()
    local t = triggers.ManualScheduleTrigger({ 2, 5 }, 'iteration')
    assert.are.same({ 2, 5 }, fires(t, 4, 8))
    assert.is_true(t.finished)
    local e = triggers.ManualScheduleTrigger({ 1, 1.5 }, 'epoch')
    assert.are.same({ 4, 6 }, fires(e, 4, 10))
    assert.are.same({ 3 }, fires(triggers.ManualScheduleTrigger(3, 'iteration'), 4, 5))
  end)
end)

describe('MaxValueTrigger / MinValueTrigger', function()
  it('fire when the mean over the period improves', function()
    -- per-iteration values; period 2 iterations -> means 2, 1, 3, 3
    local vals = { 1, 3, 1, 1, 2, 4, 3, 3 }
    local obs = function(i) return { acc = vals[i] } end
    assert.are.same({ 2, 6 }, fires(triggers.MaxValueTrigger('acc', { 2, 'iteration' }), 4, 8, obs))
    assert.are.same({ 2, 4 }, fires(triggers.MinValueTrigger('acc', { 2, 'iteration' }), 4, 8, obs))
  end)
end)

describe('EarlyStoppingTrigger', function()
  it('stops after `patience` checks without improvement', function()
    local vals = { 5, 4, 3, 3.5, 3.2, 3.1, 3.3, 1 }
    local t = triggers.EarlyStoppingTrigger({ monitor = 'main/loss', patience = 3, check_trigger = { 1, 'iteration' },
      max_trigger = { 100, 'iteration' } })
    local got = fires(t, 4, 8, function(i) return { ['main/loss'] = vals[i] } end)
    assert.are.equal(6, got[1])
    assert.are.same({ 100, 'iteration' }, { t:get_training_length() })
  end)
  it('mode auto maximises keys with acc', function()
    local t = triggers.EarlyStoppingTrigger({ monitor = 'validation/main/accuracy', patience = 1,
      check_trigger = { 1, 'iteration' } })
    local vals = { 0.5, 0.6, 0.55 }
    local got = fires(t, 4, 3, function(i) return { ['validation/main/accuracy'] = vals[i] } end)
    assert.are.same({ 3 }, got)
    assert.has_error(function() triggers.EarlyStoppingTrigger({ mode = 'up' }) end)
  end)
  it('fires at max_trigger', function()
    local t = triggers.EarlyStoppingTrigger({ max_trigger = { 2, 'epoch' } })
    assert.are.same({ 8, 16 }, fires(t, 4, 16, function() return { ['main/loss'] = 1 } end))
  end)
end)

describe('TimeTrigger and OnceTrigger', function()
  it('TimeTrigger fires once per period of elapsed time', function()
    -- elapsed_time = i seconds
    assert.are.same({ 4, 7, 10 }, fires(triggers.TimeTrigger(3), 4, 10))
  end)
  it('OnceTrigger fires only at the first call', function()
    local t = triggers.OnceTrigger()
    assert.are.same({ 1 }, fires(t, 4, 5))
    assert.is_true(t.finished)
    local r = triggers.OnceTrigger({ call_on_resume = true })
    assert.is_false(r.finished)
  end)
end)

describe('trigger serialization', function()
  it('IntervalTrigger keeps previous_iteration / previous_epoch_detail', function()
    local serializers = require 'chainer.serializers'
    local t = triggers.IntervalTrigger(2, 'epoch')
    fires(t, 4, 5)
    local s = serializers.DictionarySerializer()
    t:serialize(s)
    assert.are.equal(5, s.target.previous_iteration:item())
    assert.are.equal(1.25, s.target.previous_epoch_detail:item())
    local path = os.tmpname()
    serializers.save_npz(path, t)
    local t2 = triggers.IntervalTrigger(2, 'epoch')
    serializers.load_npz(path, t2)
    os.remove(path)
    assert.are.equal(5, t2._previous_iteration)
    assert.are.equal(1.25, t2._previous_epoch_detail)
  end)
end)

-- chainer.training.Trainer: loop order, priorities, names, hooks, errors
local chainer = require 'chainer'
local training = require 'chainer.training'
local H = require 'training.helpers'
local err_of = require('helpers').err_of

local function trainer_with(per_epoch, stop, out)
  local u = H.FakeUpdater(per_epoch)
  return training.Trainer(u, stop, { out = out or H.tmpdir() }), u
end

describe('Trainer', function()
  it('stops at the first iteration whose epoch_detail reaches the stop epoch', function()
    local tr, u = trainer_with(4, { 3, 'epoch' })
    local calls = 0
    tr:extend(function() calls = calls + 1 end, { name = 'count' })
    tr:run()
    assert.are.equal(12, u.iteration)
    assert.are.equal(12, calls)
    assert.are.equal(1, u.finalized)
    H.rmdir(tr.out)
  end)

  it('stops by iterations and with fractional epochs', function()
    local tr, u = trainer_with(10, { 7, 'iteration' })
    tr:run()
    assert.are.equal(7, u.iteration)
    local tr2, u2 = trainer_with(10, { 2.5, 'epoch' })
    tr2:run()
    assert.are.equal(25, u2.iteration)
    H.rmdir(tr.out) H.rmdir(tr2.out)
  end)

  it('calls extensions by priority, ties in registration order, triggers honoured', function()
    local tr = trainer_with(2, { 2, 'epoch' })
    local log = {}
    local function ext(name) return function() log[#log + 1] = name end end
    tr:extend(ext('readerA'), { name = 'a' })
    tr:extend(ext('writer'), { name = 'w', priority = training.PRIORITY_WRITER })
    tr:extend(ext('readerB'), { name = 'b' })
    tr:extend(ext('editor'), { name = 'e', priority = training.PRIORITY_EDITOR })
    tr:extend(ext('epochly'), { name = 'ep', trigger = { 1, 'epoch' }, priority = 500 })
    tr:run()
    assert.are.same({
      'writer', 'editor', 'readerA', 'readerB',
      'epochly', 'writer', 'editor', 'readerA', 'readerB',
      'writer', 'editor', 'readerA', 'readerB',
      'epochly', 'writer', 'editor', 'readerA', 'readerB',
    }, log)
    H.rmdir(tr.out)
  end)

  it('resolves names: option, name, default_name, class name; duplicates get _1, _2', function()
    local tr = trainer_with(2, { 1, 'epoch' })
    local extensions = require 'chainer.training.extensions'
    local a = tr:extend(extensions.LogReport())
    local b = tr:extend(extensions.LogReport())
    local c = tr:extend(extensions.LogReport())
    assert.are.equal('LogReport', a.name)
    assert.are.equal('LogReport_1', b.name)
    assert.are.equal('LogReport_2', c.name)
    assert.are.equal(b, tr:get_extension('LogReport_1'))
    local made = training.make_extension({ default_name = 'lr_drop', trigger = { 10, 'epoch' } }, function() end)
    tr:extend(made)
    assert.are.equal(made, tr:get_extension('lr_drop'))
    tr:extend(function() end, { name = 'custom' })
    assert.is_function(tr:get_extension('custom'))
    local Mine = training.Extension:extend('MyExtension')
    Mine.__call = function() end
    local m = tr:extend(Mine())
    assert.are.equal('MyExtension', m.name)
    assert.has_error(function() tr:extend(function() end, { name = 'training' }) end)
    assert.matches("no extension named 'nope'", err_of(function() tr:get_extension('nope') end))
    assert.has_error(function() tr:extend(42) end)
  end)

  it('uses the extend() trigger over the extension trigger, else the extension one, else every iteration', function()
    local tr, u = trainer_with(3, { 2, 'epoch' })
    local n = { a = 0, b = 0, c = 0 }
    local ea = training.make_extension({ trigger = { 1, 'epoch' } }, function() n.a = n.a + 1 end)
    local eb = training.make_extension({ trigger = { 1, 'epoch' } }, function() n.b = n.b + 1 end)
    tr:extend(ea, { name = 'a' })
    tr:extend(eb, { name = 'b', trigger = { 2, 'iteration' } })
    tr:extend(function() n.c = n.c + 1 end, { name = 'c' })
    tr:run()
    assert.are.same({ a = 2, b = 3, c = 6 }, n)
    H.rmdir(tr.out)
  end)

  it('calls initialize before the loop and finalize after it', function()
    local tr = trainer_with(2, { 1, 'epoch' })
    local events = {}
    local E = training.Extension:extend('Hooks')
    E.__call = function(self, trainer) events[#events + 1] = 'call@' .. trainer.updater.iteration end
    function E:initialize(trainer) events[#events + 1] = 'init@' .. trainer.updater.iteration end
    function E:finalize() events[#events + 1] = 'finalize' end
    tr:extend(E())
    tr:run()
    assert.are.same({ 'init@0', 'call@1', 'call@2', 'finalize' }, events)
    assert.has_error(function() tr:run() end)
    H.rmdir(tr.out)
  end)

  it('on an error: calls on_error and finalize, then re-raises', function()
    local tr, u = trainer_with(2, { 5, 'epoch' })
    local seen = {}
    local E = training.Extension:extend('Failing')
    E.__call = function(self, trainer)
      if trainer.updater.iteration == 3 then error('broken at 3') end
    end
    function E:on_error(trainer, err) seen.err = err end
    function E:finalize() seen.finalized = true end
    tr:extend(E())
    assert.matches('broken at 3', err_of(function() tr:run({ show_loop_exception_msg = false }) end))
    assert.matches('broken at 3', seen.err)
    assert.is_true(seen.finalized)
    assert.are.equal(1, u.finalized)
    assert.are.equal(3, u.iteration)
    assert.is_nil(chainer.get_current_reporter())
    H.rmdir(tr.out)
  end)

  it('gives each iteration a fresh observation with the reporter current', function()
    local tr = trainer_with(2, { 2, 'iteration' })
    local seen = {}
    tr:extend(function(trainer)
      chainer.report({ x = trainer.updater.iteration })
      seen[#seen + 1] = trainer.observation
    end, { name = 'w' })
    tr:run()
    assert.are.same({ { x = 1 }, { x = 2 } }, seen)
    assert.are_not.equal(seen[1], seen[2])
    H.rmdir(tr.out)
  end)

  it('registers each optimizer target and its links with the reporter', function()
    local model = H.model()
    local optimizers = require 'chainer.optimizers'
    local opt = optimizers.SGD():setup(model)
    local u = H.FakeUpdater(2, { main = opt })
    local tr = training.Trainer(u, { 1, 'iteration' }, { out = H.tmpdir() })
    assert.are.equal('main', tr.reporter:observer_name(model))
    assert.are.equal('main/predictor', tr.reporter:observer_name(model.predictor))
    assert.are.equal('main/predictor/l1', tr.reporter:observer_name(model.predictor.l1))
    H.rmdir(tr.out)
  end)

  it('measures elapsed_time and calls call_before_training extensions at iteration 0', function()
    local tr = trainer_with(2, { 1, 'epoch' })
    assert.has_error(function() return tr.elapsed_time end)
    local before = {}
    tr:extend(function(trainer)
      if trainer.is_before_training then before[#before + 1] = trainer.updater.iteration end
    end, { name = 'b', call_before_training = true })
    tr:run()
    assert.are.same({ 0 }, before)
    assert.is_true(tr.elapsed_time >= 0)
    local e1 = tr.elapsed_time
    assert.are.equal(e1, tr.elapsed_time)   -- frozen after run
    H.rmdir(tr.out)
  end)

  it('checks its arguments', function()
    assert.has_error(function() training.Trainer(nil, { 1, 'epoch' }) end)
    assert.matches("unit must be 'epoch' or 'iteration'",
      err_of(function() training.Trainer(H.FakeUpdater(2), { 1, 'epochs' }) end))
  end)
end)

describe('make_extension', function()
  it('sets trigger, name, priority, initializer and finalizer', function()
    local init_called, fin_called = false, false
    local e = training.make_extension({
      trigger = { 2, 'epoch' }, default_name = 'x', priority = training.PRIORITY_WRITER,
      initializer = function() init_called = true end, finalizer = function() fin_called = true end,
    }, function(trainer) return 'ran' end)
    assert.are.same({ 2, 'epoch' }, e.trigger)
    assert.are.equal('x', e.default_name)
    assert.are.equal(300, e.priority)
    assert.are.equal('ran', e({}))
    e:initialize({})
    e:finalize()
    assert.is_true(init_called and fin_called)
    -- decorator form and defaults
    local d = training.make_extension({})(function() end)
    assert.are.same({ 1, 'iteration' }, d.trigger)
    assert.are.equal(training.PRIORITY_READER, d.priority)
    assert.has_error(function() training.make_extension({ invoke_before_training = true }, function() end) end)
  end)
end)

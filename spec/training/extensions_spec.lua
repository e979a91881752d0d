-- chainer.training.extensions (output formats, schedules, files)
local chainer = require 'chainer'
local T = chainer.tensor
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'
local json = require 'chainer.utils.json'
local util = require 'chainer.training._util'
local H = require 'training.helpers'
local err_of = require('helpers').err_of

-- a fake trainer run: per_epoch iterations per epoch, n iterations,
-- observation(i) gives each iteration's reports
local function run_fake(exts, per_epoch, stop, observe, out)
  local u = H.FakeUpdater(per_epoch)
  local tr = training.Trainer(u, stop, { out = out or H.tmpdir() })
  tr:extend(function(trainer)
    if observe then
      for k, v in pairs(observe(trainer.updater.iteration)) do trainer.observation[k] = v end
    end
  end, { name = 'writer', priority = training.PRIORITY_WRITER })
  for _, e in ipairs(exts) do tr:extend(e[1], e[2]) end
  tr:run()
  return tr
end

describe('LogReport', function()
  it('writes the means per epoch with epoch, iteration and elapsed_time as JSON', function()
    local lr = extensions.LogReport()
    local tr = run_fake({ { lr } }, 2, { 2, 'epoch' }, function(i) return { ['main/loss'] = i, skip = 'x' } end)
    local log = lr.log
    assert.are.equal(2, #log)
    assert.are.equal(1.5, log[1]['main/loss'])
    assert.are.equal(3.5, log[2]['main/loss'])
    assert.are.equal(1, log[1].epoch)
    assert.are.equal(4, log[2].iteration)
    assert.is_number(log[2].elapsed_time)
    local text = H.read(tr.out .. '/log')
    local parsed = json.decode(text)
    assert.are.equal(2, #parsed)
    assert.are.equal(3.5, parsed[2]['main/loss'])
    assert.matches('^%[\n    {\n        "elapsed_time"', text)   -- indent 4
    H.rmdir(tr.out)
  end)

  it('selects keys, uses its own trigger, postprocess and a templated filename', function()
    local lr = extensions.LogReport({ keys = { 'a' }, trigger = { 3, 'iteration' }, filename = 'log_{iteration}',
      postprocess = function(stats) stats.double = stats.a * 2 end })
    local tr = run_fake({ { lr } }, 10, { 6, 'iteration' }, function(i) return { a = i, b = 1 } end)
    assert.are.equal(2, #lr.log)
    assert.are.equal(2, lr.log[1].a)
    assert.is_nil(lr.log[1].b)
    assert.are.equal(10, lr.log[2].double)
    assert.is_not_nil(H.read(tr.out .. '/log_3'))
    assert.is_not_nil(H.read(tr.out .. '/log_6'))
    H.rmdir(tr.out)
  end)
end)

describe('PrintReport', function()
  it('prints Chainer\'s header and rows', function()
    local out = H.sink()
    local entries = { 'epoch', 'main/loss', 'validation/main/loss', 'main/accuracy', 'validation/main/accuracy',
      'elapsed_time' }
    local pr = extensions.PrintReport(entries, { out = out })
    local lr = extensions.LogReport()
    local tr = run_fake({ { lr }, { pr } }, 2, { 2, 'epoch' }, function(i)
      return { ['main/loss'] = 0.0622394 * i, ['main/accuracy'] = 1 / 3 }
    end)
    local lines = {}
    for l in out:text():gmatch('[^\n]*\n') do lines[#lines + 1] = l end
    assert.are.equal(3, #lines)
    assert.are.equal('epoch       main/loss   validation/main/loss  main/accuracy  validation/main/accuracy  elapsed_time\n',
      lines[1])
    local et = lr.log[1].elapsed_time
    assert.are.equal('1           ' .. string.format('%-10g', 0.0933591) .. '  ' .. string.rep(' ', 22) ..
      '0.333333       ' .. string.rep(' ', 26) .. string.format('%-12g', et) .. '  \n', lines[2])
    H.rmdir(tr.out)
  end)

  it('formats like Python {:<10g} including nan and inf', function()
    local pr = extensions.PrintReport({ 'epoch', 'a' })
    assert.are.equal('1           nan         \n', pr:format_row({ epoch = 1, a = 0 / 0 }))
    assert.are.equal('10          -inf        \n', pr:format_row({ epoch = 10, a = -math.huge }))
    assert.are.equal('2           1e-05       \n', pr:format_row({ epoch = 2, a = 1e-5 }))
    assert.are.equal('            28.9067     \n', pr:format_row({ a = 28.90671 }))
    assert.has_error(function() extensions.PrintReport({}) end)
  end)
end)

describe('ProgressBar', function()
  it('prints the four lines', function()
    local out = H.sink()
    local pb = extensions.ProgressBar({ update_interval = 5, out = out })
    local tr = run_fake({ { pb } }, 10, { 2, 'epoch' })
    local text = out:text()
    local blocks = {}
    for l in text:gmatch('[^\n]*\n') do blocks[#blocks + 1] = l end
    assert.are.equal(16, #blocks)   -- 4 refreshes x 4 lines (plain output)
    assert.are.equal('     total [############' .. string.rep('.', 38) .. '] 25.00%\n', blocks[1])
    assert.are.equal('this epoch [#########################' .. string.rep('.', 25) .. '] 50.00%\n', blocks[2])
    assert.are.equal('         5 iter, 0 epoch / 2 epochs\n', blocks[3])
    assert.matches('^       inf iters/sec%. Estimated time to finish: 0:00:00%.\n$', blocks[4])
    assert.are.equal('     total [' .. string.rep('#', 50) .. '] 100.00%\n', blocks[13])
    assert.are.equal('this epoch [' .. string.rep('.', 50) .. ']  0.00%\n', blocks[14])
    assert.matches('^ *[%d%.e+]+ iters/sec%. Estimated time to finish: ', blocks[8])
    H.rmdir(tr.out)
  end)

  it('formats times like Python timedelta', function()
    assert.are.equal('0:00:00', util.timedelta(0))
    assert.are.equal('0:00:30.123456', util.timedelta(30.123456))
    assert.are.equal('1:01:01', util.timedelta(3661))
    assert.are.equal('1 day, 3:26:26.372445', util.timedelta(86400 + 3 * 3600 + 26 * 60 + 26.372445))
    assert.are.equal('2 days, 0:00:00', util.timedelta(2 * 86400))
  end)
end)

describe('hyperparameter schedules', function()
  local function opt_trainer(lr)
    local opt = { lr = lr }
    local u = H.FakeUpdater(10, { main = opt })
    return { updater = u }, opt
  end

  it('ExponentialShift multiplies by rate per call, stops at target', function()
    local tr, opt = opt_trainer(1)
    local e = extensions.ExponentialShift('lr', 0.5, { target = 0.2 })
    e:initialize(tr)
    assert.are.equal(1, opt.lr)
    e(tr) assert.are.equal(0.5, opt.lr)
    e(tr) assert.are.equal(0.25, opt.lr)
    e(tr) assert.are.equal(0.2, opt.lr)
    assert.has_error(function() extensions.ExponentialShift('lr', -1) end)
  end)

  it('StepShift, InverseShift, PolynomialShift, LinearShift, WarmupShift, MultistepShift', function()
    local tr, opt = opt_trainer(0.8)
    local s = extensions.StepShift('lr', 0.5, 2)
    s:initialize(tr)
    local got = {}
    for i = 1, 4 do s(tr) got[i] = opt.lr end
    assert.are.same({ 0.8, 0.4, 0.4, 0.2 }, got)

    tr, opt = opt_trainer(1)
    local inv = extensions.InverseShift('lr', 1, 2)
    inv:initialize(tr)
    inv(tr) assert.are.equal(0.25, opt.lr)
    inv(tr) assert.is_true(math.abs(opt.lr - 1 / 9) < 1e-15)

    tr, opt = opt_trainer(1)
    local p = extensions.PolynomialShift('lr', 0.5, { 100, 'iteration' })
    p:initialize(tr)
    for _ = 1, 19 do p(tr) end
    assert.is_true(math.abs(opt.lr - (1 - 19 / 100) ^ 0.5) < 1e-12)
    assert.matches("'batchsize' and 'len_dataset' should be specified",
      err_of(function() extensions.PolynomialShift('lr', 0.5, { 10, 'epoch' }) end))
    local pe = extensions.PolynomialShift('lr', 1, { 2, 'epoch' }, { batchsize = 10, len_dataset = 50 })
    assert.are.equal(10, pe._max_count)

    tr, opt = opt_trainer(0)
    local l = extensions.LinearShift('lr', { 1, 0 }, { 2, 6 })
    l:initialize(tr)
    got = {}
    for i = 1, 7 do l(tr) got[i] = opt.lr end
    assert.are.same({ 1, 1, 0.75, 0.5, 0.25, 0, 0 }, got)

    tr, opt = opt_trainer(1)
    local w = extensions.WarmupShift('lr', 0, 4)
    w:initialize(tr)
    assert.are.equal(0, opt.lr)
    got = {}
    for i = 1, 5 do w(tr) got[i] = opt.lr end
    assert.are.same({ 0.25, 0.5, 0.75, 1, 1 }, got)

    tr, opt = opt_trainer(1)
    local m = extensions.MultistepShift('lr', 0.1, { 2, 4 }, 1)
    m:initialize(tr)
    got = {}
    for i = 1, 5 do m(tr) got[i] = opt.lr end
    assert.are.equal(1, got[1])
    assert.is_true(math.abs(got[2] - 0.1) < 1e-15 and math.abs(got[4] - 0.01) < 1e-15)
  end)

  it('keeps restored state in initialize (resume)', function()
    local serializers = require 'chainer.serializers'
    local tr, opt = opt_trainer(1)
    local e = extensions.ExponentialShift('lr', 0.5)
    e:initialize(tr)
    e(tr) e(tr)
    local path = os.tmpname()
    serializers.save_npz(path, e)
    local tr2, opt2 = opt_trainer(1)
    local e2 = extensions.ExponentialShift('lr', 0.5)
    serializers.load_npz(path, e2)
    os.remove(path)
    e2:initialize(tr2)
    assert.are.equal(0.25, opt2.lr)
    e2(tr2)
    assert.are.equal(0.125, opt2.lr)
  end)

  it('lr_drop at epochs 10, 20 through make_extension', function()
    local opt = { lr = 1 }
    local u = H.FakeUpdater(2, { main = opt })
    local tr = training.Trainer(u, { 25, 'epoch' }, { out = H.tmpdir() })
    local drops = {}
    tr:extend(training.make_extension({ trigger = { 10, 'epoch' }, default_name = 'lr_drop' }, function(trainer)
      local o = trainer.updater:get_optimizer('main')
      o.lr = o.lr * 0.1
      drops[#drops + 1] = trainer.updater.epoch
    end))
    tr:run()
    assert.are.same({ 10, 20 }, drops)
    assert.is_true(math.abs(opt.lr - 0.01) < 1e-15)
    H.rmdir(tr.out)
  end)
end)

describe('observe_value / observe_lr / MicroAverage', function()
  it('put values into the observation', function()
    local opt = { lr = 0.125 }
    local u = H.FakeUpdater(2, { main = opt })
    local tr = training.Trainer(u, { 2, 'epoch' }, { out = H.tmpdir() })
    local lr = extensions.LogReport()
    tr:extend(extensions.observe_lr())
    tr:extend(extensions.observe_value('it', function(t) return t.updater.iteration end))
    tr:extend(function(trainer) trainer.observation.correct = 3 trainer.observation.total = 4 end,
      { name = 'w', priority = training.PRIORITY_WRITER })
    tr:extend(extensions.MicroAverage('correct', 'total', 'micro'))
    tr:extend(lr)
    tr:run()
    assert.are.equal(0.125, lr.log[1].lr)
    assert.are.equal(2, lr.log[1].it)
    assert.are.equal(0.75, lr.log[2].micro)
    H.rmdir(tr.out)
  end)
end)

describe('snapshot', function()
  it('expands {.updater.iteration} / {.updater.epoch} templates', function()
    local tr = { updater = { iteration = 1138, epoch = 20 } }
    assert.are.equal('snapshot_iter_1138', util.format_template('snapshot_iter_{.updater.iteration}', tr))
    assert.are.equal('model_epoch-20', util.format_template('model_epoch-{0.updater.epoch}', tr))
    assert.are.equal('m_0020.npz', util.format_template('m_{.updater.epoch:04d}.npz', tr))
    assert.are.equal('x', util.format_template(function() return 'x' end, tr))
    assert.has_error(function() util.format_template('{.updater.nope}', tr) end)
  end)

  it('saves snapshot_object files that load into a fresh model, and keeps n_retains files', function()
    local model = H.model(3)
    local opt = require('chainer.optimizers').SGD():setup(model)
    local u = H.FakeUpdater(2, { main = opt })
    local tr = training.Trainer(u, { 3, 'epoch' }, { out = H.tmpdir() })
    tr:extend(extensions.snapshot_object(model.predictor, 'model_epoch-{.updater.epoch}', { n_retains = 2 }))
    tr:run()
    assert.is_nil(H.read(tr.out .. '/model_epoch-1'))
    assert.is_not_nil(H.read(tr.out .. '/model_epoch-2'))
    local fresh = H.model(4).predictor
    chainer.serializers.load_npz(tr.out .. '/model_epoch-3', fresh)
    assert.are.equal(0, (fresh.l1.W.array - model.predictor.l1.W.array):abs():max():item())
    -- no temporary files left behind
    for _, name in ipairs(require('chainer._fs').listdir(tr.out)) do assert.is_nil(name:find('tmp', 1, true), name) end
    H.rmdir(tr.out)
  end)
end)

describe('Evaluator', function()
  it('reports unweighted batch means under validation/main/...', function()
    local L = require 'chainer.links'
    local iterators = require 'chainer.iterators'
    local ds = H.problem(25, 0)
    local model = H.model(1)
    local ev = extensions.Evaluator(iterators.SerialIterator(ds, 10, { loop = false, shuffle = false }), model)
    local result = ev()    -- standalone: no prefix
    assert.is_number(result['main/loss'])
    -- by hand: three batches (10, 10, 5), mean of the three losses
    local F = require 'chainer.functions'
    local sum, n = 0, 0
    chainer.using_config('train', false, function()
      for s = 1, 25, 10 do
        local e = math.min(s + 9, 25)
        local xs = chainer.dataset.concat_examples(ds:slice(s, e))
        local y = model.predictor(xs[1])
        sum = sum + F.softmax_cross_entropy(y, xs[2]).array:item()
        n = n + 1
      end
    end)
    assert.is_true(math.abs(result['main/loss'] - sum / n) < 1e-6)
    -- in a trainer: prefixed by the extension name
    local opt = require('chainer.optimizers').SGD():setup(model)
    local u = H.FakeUpdater(2, { main = opt })
    local tr = training.Trainer(u, { 1, 'epoch' }, { out = H.tmpdir() })
    local lr = extensions.LogReport()
    tr:extend(ev)
    tr:extend(extensions.Evaluator(iterators.SerialIterator(ds, 10, { loop = false, shuffle = false }), model))
    tr:extend(lr)
    tr:run()
    assert.is_true(math.abs(lr.log[1]['validation/main/loss'] - sum / n) < 1e-6)
    assert.is_number(lr.log[1]['validation_1/main/accuracy'])
    H.rmdir(tr.out)
  end)

  it('refuses an iterator that repeats (the evaluation would never end)', function()
    local iterators = require 'chainer.iterators'
    local model = H.model(1)
    local repeating = iterators.SerialIterator(H.problem(5, 0), 2)
    local ok, err = pcall(extensions.Evaluator, repeating, model)
    assert.is_false(ok)
    assert.truthy(tostring(err):find('Evaluator: the iterator "main" repeats', 1, true))
    assert.truthy(tostring(err):find('loop = false', 1, true))
    -- a subclass that counts its own batches keeps Chainer's warning only
    local Counted = extensions.Evaluator:extend('Counted')
    function Counted:evaluate() return { n = self:get_iterator('main'):next() and 1 } end
    local ev = Counted(iterators.SerialIterator(H.problem(5, 0), 2), model)
    assert.are.equal(1, ev:evaluate().n)
  end)
end)

describe('DumpGraph, PlotReport, ParameterStatistics, FailOnNonNumber, unchain_variables', function()
  local function real_run(exts, epochs)
    local ds = H.problem(40, 0)
    local model = H.model(1)
    local iterators = require 'chainer.iterators'
    local opt = require('chainer.optimizers').SGD({ lr = 0.1 }):setup(model)
    local updater = training.StandardUpdater(iterators.SerialIterator(ds, 10), opt)
    local tr = training.Trainer(updater, { epochs or 2, 'epoch' }, { out = H.tmpdir() })
    for _, e in ipairs(exts(model)) do tr:extend(e) end
    tr:run({ show_loop_exception_msg = false })
    return tr, model
  end

  it('write cg.dot and the plots', function()
    local pr
    local tr = real_run(function()
      pr = extensions.PlotReport({ 'main/loss' }, { x_key = 'epoch', filename = 'loss.png' })
      return { extensions.dump_graph('main/loss'), pr }
    end)
    local dot = H.read(tr.out .. '/cg.dot')
    assert.matches('^digraph', dot)
    assert.matches('Linear', dot)
    assert.is_false(chainer.config.keep_graph_on_report)
    assert.are.equal(2, #pr:data('main/loss'))
    local svg = H.read(tr.out .. '/loss.svg')
    assert.matches('<svg', svg)
    assert.matches('main/loss', svg)
    if extensions.PlotReport.available() then
      local png = H.read(tr.out .. '/loss.png')
      assert.are.equal('\137PNG\r\n\26\n', png:sub(1, 8))
    end
    H.rmdir(tr.out)
  end)

  it('ParameterStatistics reports Chainer-style keys', function()
    local lr = extensions.LogReport()
    local tr = real_run(function(model)
      return { extensions.ParameterStatistics(model.predictor.l1, { prefix = 'ps' }), lr }
    end, 1)
    local e = lr.log[1]
    assert.is_number(e['ps/l1/W/data/mean'])
    assert.is_number(e['ps/l1/b/grad/std'])
    assert.is_number(e['ps/l1/W/data/percentile/6'])
    assert.is_true(e['ps/l1/W/data/min'] <= e['ps/l1/W/data/percentile/0'])
    H.rmdir(tr.out)
  end)

  it('FailOnNonNumber stops a diverging run', function()
    local ok, err = pcall(real_run, function(model)
      return {
        training.make_extension({ default_name = 'poison', priority = training.PRIORITY_WRITER }, function(trainer)
          if trainer.updater.iteration == 2 then model.predictor.l1.W.array:fill_(0 / 0) end
        end),
        extensions.FailOnNonNumber(),
      }
    end)
    assert.is_false(ok)
    assert.matches("parameters in optimizer 'main' diverge", err)
  end)

  it('unchain_variables cuts the reported graphs', function()
    local seen
    local tr = chainer.using_config('keep_graph_on_report', true, function()
      return real_run(function()
        return {
          extensions.unchain_variables,
          training.make_extension({ default_name = 'peek', priority = 50 }, function(trainer)
            seen = trainer.observation['main/loss']
          end),
        }
      end, 1)
    end)
    assert.is_nil(seen.creator)
    H.rmdir(tr.out)
  end)
end)

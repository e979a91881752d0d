-- Misspelled options are errors outside functions/ and links/ too: every
-- optimizer, update rule, optimizer hook, iterator, extension, updater,
-- trigger, dataset and serializer that takes an options table rejects an
-- unknown key with "<Class>: unknown option '<key>' (accepted: ...)".
-- (Table-driven: one row per constructor.)
local chainer = require 'chainer'
local T = chainer.tensor
local L = chainer.links
local optimizers = require 'chainer.optimizers'
local hooks = require 'chainer.optimizer_hooks'
local iterators = require 'chainer.iterators'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'
local triggers = require 'chainer.training.triggers'
local updaters = require 'chainer.training.updaters'
local datasets = require 'chainer.datasets'
local serializers = require 'chainer.serializers'
local H = require 'training.helpers'

local BAD = 'misspelled_key'

local function error_of(f)
  local ok, err = pcall(f)
  assert.is_false(ok, 'expected an error')
  return tostring(err)
end

-- Asserts that `f` fails naming `who` and the misspelled key, and lists
-- what it accepts.
local function rejects(who, f)
  local err = error_of(f)
  local expected = who .. ": unknown option '" .. BAD .. "' (accepted: "
  assert(err:find(expected, 1, true), 'error "' .. err .. '" lacks "' .. expected .. '"')
end

local function bad(extra)
  local o = { [BAD] = 1 }
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

-- Shared fixtures, built once.
local ds = {}
for i = 1, 8 do ds[i] = { T.tensor { i }, i % 2 } end
local function model() return L.Classifier(L.Linear(1, 2)) end
local function set_up_optimizer() return optimizers.SGD():setup(model()) end
local function iterator() return iterators.SerialIterator(ds, 2) end

describe('every optimizer and update rule', function()
  local names = {}
  for name, cls in pairs(optimizers) do
    if type(cls) == 'table' and rawget(cls, '_hyper_names') and #cls._hyper_names > 0 then names[#names + 1] = name end
  end
  table.sort(names)

  it('has been found (the fifteen optimizers and eleven rules: the Adam family shares AdamRule)', function()
    assert.is_true(#names >= 26, table.concat(names, ', '))
  end)

  for _, name in ipairs(names) do
    it(name .. ' rejects a misspelled option', function()
      rejects(name, function() optimizers[name](bad()) end)
    end)
  end
end)

describe('constructors taking options', function()
  local rows = {
    -- optimizer hooks
    { 'WeightDecay', function() hooks.WeightDecay(bad { rate = 1e-4 }) end },
    { 'Lasso', function() hooks.Lasso(bad { rate = 1e-4 }) end },
    { 'GradientClipping', function() hooks.GradientClipping(bad { threshold = 1 }) end },
    { 'GradientHardClipping', function() hooks.GradientHardClipping(bad { lower_bound = -1, upper_bound = 1 }) end },
    { 'GradientNoise', function() hooks.GradientNoise(bad { eta = 0.1 }) end },
    { 'GradientLARS', function() hooks.GradientLARS(bad()) end },
    { 'UpdateRule.add_hook', function()
      local opt = set_up_optimizer()
      opt.target.predictor.W.update_rule:add_hook(function() end, bad { name = 'h' })
    end },
    { 'Optimizer.add_hook', function() set_up_optimizer():add_hook(hooks.WeightDecay(1e-4), bad()) end },
    -- iterators and order samplers
    { 'SerialIterator', function() iterators.SerialIterator(ds, 2, bad { shuffle = false }) end },
    { 'MultithreadIterator', function() iterators.MultithreadIterator(ds, 2, bad { n_threads = 1 }) end },
    { 'ShuffleOrderSampler', function() iterators.ShuffleOrderSampler(bad { seed = 1 }) end },
    -- updaters
    { 'StandardUpdater', function() updaters.StandardUpdater(iterator(), set_up_optimizer(), bad()) end },
    { 'ParallelUpdater', function()
      updaters.ParallelUpdater(iterator(), set_up_optimizer(), bad { devices = { main = -1 } })
    end },
    -- triggers
    { 'EarlyStoppingTrigger', function() triggers.EarlyStoppingTrigger(bad { monitor = 'main/loss' }) end },
    { 'OnceTrigger', function() triggers.OnceTrigger(bad()) end },
    -- the trainer
    { 'Trainer', function() training.Trainer(H.FakeUpdater(), { 1, 'epoch' }, bad { out = '/tmp' }) end },
    { 'Trainer:extend', function()
      training.Trainer(H.FakeUpdater(), { 1, 'epoch' }, { out = '/tmp' }):extend(function() end, bad())
    end },
    { 'Trainer:run', function() training.Trainer(H.FakeUpdater(), { 1, 'epoch' }, { out = '/tmp' }):run(bad()) end },
    { 'make_extension', function() extensions.make_extension(bad(), function() end) end },
    -- extensions
    { 'LogReport', function() extensions.LogReport(bad { trigger = { 1, 'epoch' } }) end },
    { 'PrintReport', function() extensions.PrintReport({ 'epoch' }, bad()) end },
    { 'ProgressBar', function() extensions.ProgressBar(bad { update_interval = 10 }) end },
    { 'PlotReport', function() extensions.PlotReport({ 'main/loss' }, 'epoch', bad { filename = 'x.png' }) end },
    { 'Evaluator', function() extensions.Evaluator(iterator(), model(), bad()) end },
    { 'MicroAverage', function() extensions.MicroAverage('c', 't', 'r', bad()) end },
    { 'snapshot', function() extensions.snapshot(bad { filename = 's' }) end },
    { 'snapshot_object', function() extensions.snapshot_object(model(), 'm', bad()) end },
    { 'ExponentialShift', function() extensions.ExponentialShift('lr', 0.5, bad()) end },
    { 'LinearShift', function() extensions.LinearShift('lr', { 1, 0 }, { 0, 10 }, bad()) end },
    { 'MultistepShift', function() extensions.MultistepShift('lr', 0.1, { 10 }, 1, bad()) end },
    { 'PolynomialShift', function() extensions.PolynomialShift('lr', 0.5, 10, bad()) end },
    { 'StepShift', function() extensions.StepShift('lr', 0.5, 10, bad()) end },
    { 'WarmupShift', function() extensions.WarmupShift('lr', 0, 10, bad()) end },
    { 'InverseShift', function() extensions.InverseShift('lr', 0.5, 1, bad()) end },
    { 'observe_value', function() extensions.observe_value('v', function() return 1 end, bad()) end },
    { 'observe_lr', function() extensions.observe_lr(bad()) end },
    { 'ParameterStatistics', function() extensions.ParameterStatistics(model(), bad()) end },
    { 'VariableStatisticsPlot', function() extensions.VariableStatisticsPlot(model(), bad()) end },
    { 'FailOnNonNumber', function() extensions.FailOnNonNumber(bad()) end },
    { 'DumpGraph', function() extensions.DumpGraph('main/loss', bad()) end },
    -- datasets (the options are checked before any file is read)
    { 'get_mnist', function() datasets.get_mnist(bad { ndim = 3 }) end },
    { 'get_fashion_mnist', function() datasets.get_fashion_mnist(bad()) end },
    { 'get_kuzushiji_mnist', function() datasets.get_kuzushiji_mnist(bad()) end },
    { 'get_cifar10', function() datasets.get_cifar10(bad()) end },
    { 'get_cifar100', function() datasets.get_cifar100(bad()) end },
    { 'get_svhn', function() datasets.get_svhn(bad()) end },
    { 'ImageDataset', function() datasets.ImageDataset({ 'a.png' }, bad { root = '.' }) end },
    { 'LabeledImageDataset', function() datasets.LabeledImageDataset({ { 'a.png', 0 } }, bad()) end },
    { 'TextDataset', function() datasets.TextDataset({ 'a.txt' }, bad()) end },
    -- serializers
    { 'save_npz', function() serializers.save_npz('/tmp/never.npz', model(), bad()) end },
    { 'load_npz', function() serializers.load_npz('/tmp/never.npz', model(), bad()) end },
    { 'NpzDeserializer', function() serializers.NpzDeserializer({}, bad()) end },
    -- links and parameters (lua/chainer/link.lua, parameter.lua, sequential.lua)
    { 'add_param', function() chainer.Link():add_param('W', { 2 }, bad { dtype = 'float32' }) end },
    { 'params', function() model():params(bad()) end },
    { 'namedlinks', function() model():namedlinks(bad()) end },
    { 'copy', function() model():copy(bad { mode = 'copy' }) end },
    { 'repeat_', function() model():repeat_(2, bad()) end },
    { 'Sequential.repeat_', function() chainer.Sequential(L.Linear(1, 1)):repeat_(2, bad()) end },
    { 'Parameter', function() chainer.Parameter(0, { 2 }, bad { name = 'W' }) end },
    -- others
    { 'PrintHook', function() chainer.function_hooks.PrintHook(bad()) end },
    { 'build_computational_graph', function()
      require('chainer.computational_graph').build_computational_graph({}, bad())
    end },
    { 'check_backward', function()
      chainer.gradient_check.check_backward(function(x) return x end, T.ones { 2 }, T.ones { 2 }, bad())
    end },
    { 'HeNormal', function() chainer.initializers.HeNormal(1, bad()) end },
    { 'json.encode', function() require('chainer.utils.json').encode({ 1 }, bad()) end },
    { 'kernel scale2', function() chainer.cuda.elementwise('T x', 'T y', 'y = 2 * x', 'scale2', bad()) end },
  }
  for _, row in ipairs(rows) do
    it(row[1] .. ' rejects a misspelled option', function() rejects(row[1], row[2]) end)
  end
end)

describe('PlotReport positional arguments', function()
  it("keeps the options after Chainer's positional x_key (PlotReport(keys, 'epoch', {filename =}))", function()
    local p = extensions.PlotReport({ 'main/loss' }, 'epoch', { filename = 'x.png', marker = false })
    assert.equal('epoch', p._x_key)
    assert.equal('x.png', p._file_name)
    assert.is_false(p._marker)
  end)

  it("takes Chainer's whole positional form (y_keys, x_key, trigger, postprocess, filename, marker, grid)", function()
    local post = function() end
    local p = extensions.PlotReport({ 'main/loss' }, 'iteration', { 2, 'iteration' }, post, 'loss.png', 'o', false)
    assert.equal('iteration', p._x_key)
    assert.equal(post, p._postprocess)
    assert.equal('loss.png', p._file_name)
    assert.equal('o', p._marker)
    assert.is_false(p._grid)
    assert.equal(2, p._trigger.period)
  end)

  it('refuses a value given both positionally and by name, and too many positional values', function()
    assert.matches('PlotReport: x_key given both positionally and in the options',
      error_of(function() extensions.PlotReport({ 'a' }, 'epoch', { x_key = 'epoch' }) end))
    assert.matches('PlotReport: too many positional arguments',
      error_of(function() extensions.PlotReport({ 'a' }, 'epoch', nil, nil, 'f.png', 'x', true, 'extra') end))
  end)
end)

describe("other positional forms of Chainer's signatures", function()
  it("SerialIterator(ds, n, repeat, shuffle) and Trainer(updater, stop, out)", function()
    local it = iterators.SerialIterator(ds, 2, false, false)
    assert.is_false(it._repeat)
    assert.equal(1, it:next()[1][2] == 1 and 1 or 0)
    local tr = training.Trainer(H.FakeUpdater(), { 1, 'epoch' }, '/tmp/chainlua_positional_out')
    assert.equal('/tmp/chainlua_positional_out', tr.out)
  end)

  it('optimizers take their hyperparameters positionally or by name', function()
    assert.equal(0.5, optimizers.MomentumSGD(0.1, 0.5).momentum)
    assert.equal(0.5, optimizers.MomentumSGD(0.1, { momentum = 0.5 }).momentum)
  end)

  it("VariableStatisticsPlot takes Chainer's positional order or names", function()
    assert.matches('VariableStatisticsPlot: max_sample_size given both positionally and in the options',
      error_of(function() extensions.VariableStatisticsPlot(model(), 1000, { max_sample_size = 10 }) end))
  end)
end)
